"""Criteria became rows that HITs, judgments and ranking runs point at (annotation 0022-0024,
ranking 0013-0015): an install from before keeps every HIT, judgment and run, each with
the criterion it named."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.models import Campaign, CampaignCriterion, Hit, Judgment
from ranking.models import RankingRun

BEFORE_CRITERION_ROWS = [
    ("annotation", "0021_upload_job"),
    ("ranking", "0012_agreement_and_metrics_apps"),
]


def old_rows(apps):
    """A campaign as it was before: criteria quality and naturalness by name, a HIT of each
    judged, a HIT of a criterion the campaign has no row of, a run of quality."""
    get = apps.get_model
    campaign = get("annotation", "Campaign").objects.create(slug="old", name="Old")
    for name in ("quality", "naturalness"):
        get("annotation", "CampaignCriterion").objects.create(campaign=campaign, criterion=name)
    item = get("annotation", "Item").objects.create(
        campaign=campaign, external_id="1", input_kind="mr", input_data={}, input_key="k"
    )
    system = get("annotation", "System").objects.create(campaign=campaign, name="tgen")
    output = get("annotation", "Output").objects.create(item=item, system=system, text="A.")
    annotator = get("annotation", "Annotator").objects.create(
        campaign=campaign, source="invited", external_id="ada"
    )
    for name in ("quality", "naturalness", "fluency"):
        hit = get("annotation", "Hit").objects.create(campaign=campaign, criterion=name, item=item)
        slot = get("annotation", "HitOutput").objects.create(hit=hit, output=output, position=1)
        assignment = get("annotation", "Assignment").objects.create(
            hit=hit, annotator=annotator, status="submitted"
        )
        get("annotation", "Judgment").objects.create(assignment=assignment, slot=slot, score=90)
    get("ranking", "RankingRun").objects.create(campaign=campaign, criterion="quality")
    return campaign.pk


@pytest.mark.django_db(transaction=True)
def test_migrating_to_criterion_rows_keeps_hits_judgments_and_runs_with_their_criterion():
    old_state = MigrationExecutor(connection).migrate(BEFORE_CRITERION_ROWS)
    campaign_id = old_rows(old_state.apps)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    criteria = CampaignCriterion.objects.filter(campaign_id=campaign_id)
    assert list(criteria.values_list("name", "shows_input", "is_open")) == [
        ("fluency", True, False),  # made for its HIT, closed
        ("naturalness", False, True),
        ("quality", True, True),
    ]
    hits = Hit.objects.filter(campaign_id=campaign_id).order_by("pk")
    assert [hit.criterion.name for hit in hits] == ["quality", "naturalness", "fluency"]
    judgments = Judgment.objects.filter(assignment__hit__campaign_id=campaign_id)
    assert all(j.criterion_id == j.assignment.hit.criterion_id for j in judgments)
    assert judgments.count() == 3
    (run,) = RankingRun.objects.filter(campaign_id=campaign_id)
    assert run.criterion == criteria.get(name="quality")


BEFORE_FOLD = [("annotation", "0029_direct_assessment_scores")]


def page_with_a_further_score(apps) -> None:
    """A DA page of quality that also asked naturalness: quality's score a Judgment, the
    further one a CriterionScore, as 0029 stored them."""
    get = apps.get_model
    campaign = get("annotation", "Campaign").objects.create(slug="da", name="DA")
    criteria = get("annotation", "CampaignCriterion").objects
    quality = criteria.create(
        campaign=campaign, name="quality", form="da", settings={"also_asks": ["naturalness"]}
    )
    naturalness = criteria.create(campaign=campaign, name="naturalness", form="da")
    item = get("annotation", "Item").objects.create(
        campaign=campaign, external_id="1", input_kind="mr", input_data={}, input_key="k"
    )
    system = get("annotation", "System").objects.create(campaign=campaign, name="tgen", key="tgen")
    output = get("annotation", "Output").objects.create(item=item, system=system, text="A.")
    annotator = get("annotation", "Annotator").objects.create(
        campaign=campaign, source="invited", external_id="ada"
    )
    hit = get("annotation", "Hit").objects.create(campaign=campaign, criterion=quality, item=item)
    slot = get("annotation", "HitOutput").objects.create(hit=hit, output=output, position=1)
    assignment = get("annotation", "Assignment").objects.create(
        hit=hit, annotator=annotator, status="submitted"
    )
    get("annotation", "Judgment").objects.create(
        assignment=assignment, slot=slot, criterion=quality, score=70
    )
    get("annotation", "CriterionScore").objects.create(
        assignment=assignment, slot=slot, criterion=naturalness, score=30
    )


@pytest.mark.django_db(transaction=True)
def test_folding_criterion_scores_makes_each_a_judgment_of_its_criterion_and_back():
    old_state = MigrationExecutor(connection).migrate(BEFORE_FOLD)
    page_with_a_further_score(old_state.apps)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    judged = Judgment.objects.filter(assignment__hit__campaign__slug="da")
    assert sorted(
        judged.values_list("criterion__name", "score", "assignment__hit__criterion__name")
    ) == [
        ("naturalness", 30.0, "quality"),
        ("quality", 70.0, "quality"),
    ]
    assert "annotation_criterionscore" not in connection.introspection.table_names()

    executor = MigrationExecutor(connection)
    back = executor.migrate(BEFORE_FOLD).apps
    scores = back.get_model("annotation", "CriterionScore").objects
    assert list(scores.values_list("criterion__name", "score")) == [("naturalness", 30.0)]
    judgments = back.get_model("annotation", "Judgment").objects
    assert list(judgments.values_list("criterion__name", "score")) == [("quality", 70.0)]

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


BEFORE_STANDARD_WRITTEN = [("annotation", "0038_composition_help_cites_research_notes")]


def campaign_rows(apps, slug: str, status: str, form: str, standard: str = "") -> None:
    get = apps.get_model
    campaign = get("annotation", "Campaign").objects.create(
        slug=slug, name=slug, status=status, standard_text=standard
    )
    get("annotation", "CampaignCriterion").objects.create(
        campaign=campaign, name="quality", form=form
    )
    for n, references in enumerate([[], ["First reference.", "Second."], ["Later."]]):
        get("annotation", "Item").objects.create(
            campaign=campaign,
            external_id=str(n),
            input_kind="mr",
            input_data={"attributes": [["name", f"Place {n}"]]},
            input_key=f"k{n}",
            references=references,
        )


@pytest.mark.django_db(transaction=True)
def test_migrating_writes_the_standard_annotators_were_shown_into_the_campaign():
    old_state = MigrationExecutor(connection).migrate(BEFORE_STANDARD_WRITTEN)
    campaign_rows(old_state.apps, "shown", "open", "rankme")
    campaign_rows(old_state.apps, "closed", "closed", "rankme")
    campaign_rows(old_state.apps, "draft", "draft", "rankme")
    campaign_rows(old_state.apps, "da", "open", "da")
    campaign_rows(old_state.apps, "own", "open", "rankme", standard="The organiser's.")

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    standards = dict(Campaign.objects.values_list("slug", "standard_text"))
    assert standards == {
        "shown": "First reference.",
        "closed": "First reference.",
        "draft": "",  # never shown: it gets one before it opens
        "da": "",  # its pages show no standard
        "own": "The organiser's.",
    }
    shown = Campaign.objects.get(slug="shown")
    assert (shown.standard_input_kind, shown.standard_input) == (
        "mr",
        {"attributes": [["name", "Place 1"]]},
    )
