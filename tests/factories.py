"""Plain factories: make_<thing>(**overrides) returns a saved row with sensible defaults."""

import itertools
from datetime import timedelta

from django.utils import timezone

from annotation.models import (
    DEFAULT_QUESTIONS,
    NATURALNESS,
    QUALITY,
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    Hit,
    HitOutput,
    Item,
    Judgment,
    Output,
    System,
)

_numbers = itertools.count(1)


def make_campaign(**overrides) -> Campaign:
    n = next(_numbers)
    fields = {
        "slug": f"campaign-{n}",
        "name": f"Campaign {n}",
        "status": Campaign.Status.OPEN,
        "standard_text": "The Vaults is a pub near Café Adriatic.",
        "standard_input": {"attributes": [["name", "The Vaults"], ["eatType", "pub"]]},
        # Tests of everything else count HITs of k outputs; those of attention checks
        # (and the query bounds, at their worst) turn them on.
        "attention_check_every": 0,
    }
    fields.update(overrides)
    campaign = Campaign.objects.create(**fields)
    for name in DEFAULT_QUESTIONS:
        # The tests of the comprehension check turn it on (the model's default): the rest
        # count HITs from the first one.
        CampaignCriterion.objects.create(
            campaign=campaign,
            name=name,
            shows_input=name != NATURALNESS,
            comprehension_check=False,
        )
    return campaign


def criterion_of(campaign, criterion: "str | CampaignCriterion") -> CampaignCriterion:
    """The campaign's criterion: the row given, or the one of this name."""
    if isinstance(criterion, CampaignCriterion):
        return criterion
    return campaign.criteria.get(name=criterion)


def make_item(campaign=None, **overrides) -> Item:
    n = next(_numbers)
    attributes = [["name", f"Place {n}"], ["eatType", "pub"], ["area", "riverside"]]
    fields = {
        "external_id": str(n),
        "input_kind": "mr",
        "input_data": {"attributes": attributes},
        "input_key": f"name[Place {n}], eatType[pub], area[riverside]",
        "references": [f"Place {n} is a pub by the river."],
    }
    fields.update(overrides)
    return Item.objects.create(campaign=campaign or make_campaign(), **fields)


def make_system(campaign=None, **overrides) -> System:
    fields = {"name": f"system-{next(_numbers)}"}
    fields.update(overrides)
    return System.objects.create(campaign=campaign or make_campaign(), **fields)


def make_output(item=None, system=None, **overrides) -> Output:
    item = item or make_item()
    system = system or make_system(item.campaign)
    fields = {"text": f"Output of {system.name} for item {item.external_id}."}
    fields.update(overrides)
    return Output.objects.create(item=item, system=system, **fields)


def make_annotator(campaign=None, **overrides) -> Annotator:
    fields = {"source": Annotator.Source.PROLIFIC, "external_id": f"worker-{next(_numbers)}"}
    fields.update(overrides)
    return Annotator.objects.create(campaign=campaign or make_campaign(), **fields)


def make_hit(outputs, criterion: "str | CampaignCriterion" = QUALITY, **overrides) -> Hit:
    """A HIT showing `outputs` (all for one item) in the order given, of the criterion
    (a row, or the name of one of the campaign's)."""
    item = outputs[0].item
    criterion = criterion_of(item.campaign, criterion)
    hit = Hit.objects.create(campaign=item.campaign, item=item, criterion=criterion, **overrides)
    for position, output in enumerate(outputs, start=1):
        HitOutput.objects.create(hit=hit, output=output, position=position)
    return hit


def make_judged_hit(
    outputs, scores, annotator=None, criterion: "str | CampaignCriterion" = QUALITY
) -> Assignment:
    """A submitted assignment of a new HIT over `outputs`, scored `scores`."""
    hit = make_hit(outputs, criterion=criterion)
    annotator = annotator or make_annotator(hit.campaign)
    assignment = Assignment.objects.create(
        hit=hit, annotator=annotator, status=Assignment.Status.SUBMITTED
    )
    assignment.submitted_at = assignment.started_at
    assignment.save(update_fields=["submitted_at"])
    for slot, score in zip(hit.slots.all(), scores, strict=True):
        Judgment.objects.create(
            assignment=assignment, slot=slot, criterion=hit.criterion, score=score
        )
    hit.campaign.criteria.filter(pk=hit.criterion_id).record_judgments_change()
    return assignment


def make_system_set(campaign=None, systems: int = 5, items: int = 3):
    """A campaign with `systems` systems and one output each for `items` items."""
    campaign = campaign or make_campaign()
    system_rows = [make_system(campaign, name=f"sys{i}") for i in range(1, systems + 1)]
    item_rows = [make_item(campaign) for _ in range(items)]
    for item in item_rows:
        for system in system_rows:
            make_output(item, system)
    return campaign, system_rows, item_rows


def make_assignment(hit, annotator=None, **overrides) -> Assignment:
    """An open assignment of `hit`, given out now with a 30-minute timeout."""
    now = timezone.now()
    fields = {"started_at": now, "expires_at": now + timedelta(minutes=30)}
    fields.update(overrides)
    return Assignment.objects.create(
        hit=hit, annotator=annotator or make_annotator(hit.campaign), **fields
    )


def make_bulk_judged_campaign(hits: int, systems: int = 5, items: int | None = None, **fields):
    """A campaign of `items` items (default: `hits`) with an output of each of `systems`
    systems, and `hits` submitted, judged quality HITs over the first items, written in bulk
    (the factories above would take minutes for thousands of HITs)."""
    campaign = make_campaign(**fields)
    system_rows = [make_system(campaign, name=f"sys{i}") for i in range(systems)]
    annotator = make_annotator(campaign)
    item_rows = Item.objects.bulk_create(
        Item(
            campaign=campaign,
            external_id=f"bulk-{n}",
            input_kind="mr",
            input_data={"attributes": [["name", f"Bulk {n}"]]},
            input_key=f"name[Bulk {n}] {campaign.slug}",
        )
        for n in range(items or hits)
    )
    outputs = Output.objects.bulk_create(
        Output(item=item, system=system, text=f"{system.name} on {item.external_id}")
        for item in item_rows
        for system in system_rows
    )
    quality = campaign.criteria.get(name=QUALITY)
    made = Hit.objects.bulk_create(
        Hit(campaign=campaign, item=item, criterion=quality) for item in item_rows[:hits]
    )
    slots = HitOutput.objects.bulk_create(
        HitOutput(hit=hit, output=outputs[n * systems + i], position=i + 1)
        for n, hit in enumerate(made)
        for i in range(systems)
    )
    assignments = Assignment.objects.bulk_create(
        Assignment(hit=hit, annotator=annotator, status=Assignment.Status.SUBMITTED) for hit in made
    )
    Judgment.objects.bulk_create(
        Judgment(
            assignment=assignments[n],
            slot=slots[n * systems + i],
            criterion=quality,
            score=100 + 10 * i + n % 7,
        )
        for n in range(hits)
        for i in range(systems)
    )
    return campaign
