"""Handing out HITs: which item, which systems, and to whom.

A HIT is made when an annotator asks for work (so systems that gain outputs later appear
in new HITs at once), or an earlier HIT whose assignment expired is given out again.

Size: k is the campaign's outputs per HIT, or the number of its active systems that have
outputs while that is smaller (at least 2); an item is given out once it has outputs from k
active systems.

Balance: the item is the one with the fewest live assignments (submitted and counted, or
still open) among those the annotator has not seen in this criterion; its k outputs come
from the k active systems with the fewest live judgments in the criterion, then those
least often shown with this item, ties at random.

Cost: the counts balance rests on are kept (loads.py), so a hand-out reads the lowest rows
of an index, the annotator's own assignments and the item's own HITs: a bounded number of
rows whatever the campaign's size, and the criterion's lock is held for milliseconds.

Concurrency: every change to a criterion's assignments (hand-out, expiry, release,
submission) happens inside a transaction holding the row lock of its CampaignCriterion
(`select_for_update`; SQLite takes its write lock at BEGIN IMMEDIATE instead). Two browsers
or two server processes therefore never take the same slot, and the `hit_taken_once`
constraint is the last guard.
"""

import random
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, F, OuterRef, QuerySet, Subquery
from django.utils import timezone

from .loads import shift_loads, sync_pool
from .models import (
    Annotator,
    Assignment,
    AssignmentQuerySet,
    CampaignCriterion,
    Hit,
    HitOutput,
    ItemLoad,
    Output,
    SystemLoad,
)

# Items read from the index's low end to choose among at random: ties beyond these wait
# for the next hand-out, which sees the chosen one's load grown by one.
CANDIDATES = 64


def lock_criterion(criterion: CampaignCriterion) -> CampaignCriterion:
    """Take the criterion's row lock (not its campaign's: criteria are separate tasks);
    call inside `transaction.atomic()`."""
    return (
        CampaignCriterion.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .get(pk=criterion.pk)
    )


def assignments_in(criterion: CampaignCriterion) -> AssignmentQuerySet:
    return Assignment.objects.filter(
        hit__campaign_id=criterion.campaign_id, hit__criterion=criterion.criterion
    )


def live_assignments(criterion: CampaignCriterion) -> AssignmentQuerySet:
    """Assignments that count towards balance: open ones, and submitted ones rankings use."""
    return assignments_in(criterion).live()


def active_assignment(annotator: Annotator, criterion: CampaignCriterion) -> Assignment | None:
    return assignments_in(criterion).active().filter(annotator=annotator).first()


def hits_taken(annotator: Annotator, criterion: CampaignCriterion) -> int:
    """HITs that count towards the annotator's limit: submitted or open."""
    mine = assignments_in(criterion).filter(annotator=annotator)
    return mine.exclude(status=Assignment.Status.EXPIRED).count()


def hits_submitted(annotator: Annotator, criterion: CampaignCriterion) -> int:
    return assignments_in(criterion).submitted().filter(annotator=annotator).count()


def expire_abandoned(criterion: CampaignCriterion, now=None) -> int:
    """Give the HITs of assignments past their timeout back to the pool."""
    stale = Assignment.objects.filter(
        pk__in=list(
            assignments_in(criterion).expired_by(now or timezone.now()).values_list("pk", flat=True)
        )
    )
    return end_assignments(criterion, stale)


def end_assignments(criterion: CampaignCriterion, assignments: QuerySet) -> int:
    """Open assignments that stop: their HITs go back to the pool."""
    shift_loads(criterion, assignments, -1)
    return assignments.update(status=Assignment.Status.EXPIRED)


def next_assignment(annotator: Annotator, criterion: CampaignCriterion) -> Assignment | None:
    """The annotator's open assignment in this criterion, or a new one; None when there is
    no more work for them (limit reached, criterion closed, or every item seen)."""
    now = timezone.now()
    with transaction.atomic():
        criterion = sync_pool(lock_criterion(criterion))
        expire_abandoned(criterion, now)
        mine = Mine.of(annotator, criterion)
        if mine.open is not None:
            return Assignment.objects.get(pk=mine.open)
        campaign = criterion.campaign
        if not criterion.is_open or campaign.status != campaign.Status.OPEN:
            return None
        if mine.taken >= campaign.max_hits_per_annotator:
            return None
        hit, systems = next_hit(mine, criterion)
        if hit is None:
            return None
        timeout = timedelta(minutes=campaign.assignment_timeout_minutes)
        assignment = Assignment.objects.create(
            hit=hit, annotator=annotator, started_at=now, expires_at=now + timeout
        )
        add_live_hit(criterion, hit.item_id, systems)
        return assignment


@dataclass(frozen=True)
class Mine:
    """What the hand-out needs of the annotator's own assignments in the criterion, read
    in one query (at most the HIT limit of rows)."""

    open: int | None
    taken: int
    seen: frozenset[int]

    @classmethod
    def of(cls, annotator: Annotator, criterion: CampaignCriterion) -> "Mine":
        mine = assignments_in(criterion).filter(annotator=annotator)
        rows = list(mine.values_list("pk", "status", "hit__item_id"))
        active = [pk for pk, status, _ in rows if status == Assignment.Status.ASSIGNED]
        taken = sum(status != Assignment.Status.EXPIRED for _, status, _ in rows)
        seen = frozenset(item_id for _, _, item_id in rows)
        return cls(active[0] if active else None, taken, seen)


def next_hit(mine: Mine, criterion: CampaignCriterion) -> tuple[Hit | None, list[int]]:
    """A HIT for the annotator and the systems it shows, or (None, [])."""
    k = criterion.hit_size
    if k < 2:
        return None, []
    chosen = choose_item(mine.seen, criterion)
    if chosen is None:
        return None, []
    item_id, live = chosen
    free = free_hit(item_id, criterion, k)
    if free is not None:
        return free, list(free.slots.values_list("output__system_id", flat=True))
    outputs = choose_outputs(item_id, criterion, k, shown_before=live > 0)
    return build_hit(item_id, criterion, outputs), [o.system_id for o in outputs]


def add_live_hit(criterion: CampaignCriterion, item_id: int, systems: list[int]) -> None:
    """A HIT just given out: one more live assignment of its item and slot of its systems."""
    ItemLoad.objects.filter(criterion=criterion, item_id=item_id).update(live=F("live") + 1)
    SystemLoad.objects.filter(criterion=criterion, system_id__in=systems).update(live=F("live") + 1)


def release(annotator: Annotator, criterion: CampaignCriterion) -> None:
    """The annotator stops: their open HIT goes back to the pool at once."""
    with transaction.atomic():
        criterion = lock_criterion(criterion)
        mine = assignments_in(criterion).active().filter(annotator=annotator)
        end_assignments(
            criterion, Assignment.objects.filter(pk__in=list(mine.values_list("pk", flat=True)))
        )


def choose_item(seen: frozenset[int], criterion: CampaignCriterion) -> tuple[int, int] | None:
    """The eligible item with the fewest live assignments among those not `seen`, and that
    number; ties at random among the first rows of the index."""
    lowest = list(
        ItemLoad.objects.filter(criterion=criterion, eligible=True)
        .exclude(item_id__in=seen)
        .order_by("live")
        .values_list("item_id", "live")[:CANDIDATES]
    )
    if not lowest:
        return None
    fewest = lowest[0][1]
    return random.choice([row for row in lowest if row[1] == fewest])


def system_loads_on(item_id: int, criterion: CampaignCriterion) -> dict[int, int]:
    """Live slots per system on one item: a count over the item's own HITs only."""
    slots = HitOutput.objects.filter(
        hit__item_id=item_id,
        hit__criterion=criterion.criterion,
        hit__assignments__in=live_assignments(criterion),
    )
    return dict(slots.values_list("output__system").annotate(n=Count("id")))


def choose_outputs(
    item_id: int, criterion: CampaignCriterion, k: int, shown_before: bool
) -> list[Output]:
    """The item's outputs of the k active systems with the fewest live judgments in the
    criterion, then the fewest on this item (read only if it was shown before)."""
    overall = SystemLoad.objects.filter(criterion=criterion, system_id=OuterRef("system_id"))
    outputs = list(
        Output.objects.filter(item_id=item_id, system__is_active=True).annotate(
            load=Subquery(overall.values("live")[:1])
        )
    )
    on_item = system_loads_on(item_id, criterion) if shown_before else {}
    random.shuffle(outputs)  # the sort is stable: equal loads stay in random order
    outputs.sort(key=lambda o: (o.load or 0, on_item.get(o.system_id, 0)))
    return outputs[:k]  # type: ignore[return-value]  # Outputs, with their load annotated


def build_hit(item_id: int, criterion: CampaignCriterion, outputs: list[Output]) -> Hit:
    random.shuffle(outputs)
    hit = Hit.objects.create(
        campaign_id=criterion.campaign_id, criterion=criterion.criterion, item_id=item_id
    )
    HitOutput.objects.bulk_create(
        HitOutput(hit=hit, output=output, position=position)
        for position, output in enumerate(outputs, start=1)
    )
    return hit


def free_hit(item_id: int, criterion: CampaignCriterion, k: int) -> Hit | None:
    """An earlier HIT of this item whose every assignment expired, showing active systems
    only and still of size k."""
    taken = Assignment.objects.filter(hit__item_id=item_id).exclude(
        status=Assignment.Status.EXPIRED
    )
    return (
        Hit.objects.filter(item_id=item_id, criterion=criterion.criterion)
        .exclude(pk__in=taken.values("hit"))
        .exclude(slots__output__system__is_active=False)
        .annotate(size=Count("slots"))
        .filter(size=k)
        .order_by("id")
        .first()
    )
