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

Concurrency: every change to a criterion's assignments (hand-out, expiry, release,
submission) happens inside a transaction holding the row lock of its CampaignCriterion
(`select_for_update`; SQLite takes its write lock at BEGIN IMMEDIATE instead). Two browsers
or two server processes therefore never take the same slot, and the `hit_taken_once`
constraint is the last guard.
"""

import random
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from .models import (
    Annotator,
    Assignment,
    CampaignCriterion,
    Hit,
    HitOutput,
    Item,
    Output,
    System,
    counted_q,
)


def lock_criterion(criterion: CampaignCriterion) -> CampaignCriterion:
    """Take the criterion's row lock (not its campaign's: criteria are separate tasks);
    call inside `transaction.atomic()`."""
    return (
        CampaignCriterion.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .get(pk=criterion.pk)
    )


def assignments_in(criterion: CampaignCriterion) -> QuerySet:
    return Assignment.objects.filter(
        hit__campaign_id=criterion.campaign_id, hit__criterion=criterion.criterion
    )


def live_assignments(criterion: CampaignCriterion) -> QuerySet:
    """Assignments that count towards balance: open ones, and submitted ones rankings use."""
    return assignments_in(criterion).filter(Q(status=Assignment.Status.ASSIGNED) | counted_q())


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
    stale = assignments_in(criterion).expired_by(now or timezone.now())
    return Assignment.objects.filter(pk__in=stale.values("pk")).update(
        status=Assignment.Status.EXPIRED
    )


def next_assignment(annotator: Annotator, criterion: CampaignCriterion) -> Assignment | None:
    """The annotator's open assignment in this criterion, or a new one; None when there is
    no more work for them (limit reached, criterion closed, or every item seen)."""
    now = timezone.now()
    with transaction.atomic():
        criterion = lock_criterion(criterion)
        expire_abandoned(criterion, now)
        current = active_assignment(annotator, criterion)
        if current is not None:
            return current
        campaign = criterion.campaign
        if not criterion.is_open or campaign.status != campaign.Status.OPEN:
            return None
        if hits_taken(annotator, criterion) >= campaign.max_hits_per_annotator:
            return None
        k = hit_size(criterion)
        item = choose_item(annotator, criterion, k)
        if item is None:
            return None
        hit = free_hit(item, criterion, k) or build_hit(item, criterion, k)
        timeout = timedelta(minutes=campaign.assignment_timeout_minutes)
        return Assignment.objects.create(
            hit=hit, annotator=annotator, started_at=now, expires_at=now + timeout
        )


def release(annotator: Annotator, criterion: CampaignCriterion) -> None:
    """The annotator stops: their open HIT goes back to the pool at once."""
    with transaction.atomic():
        criterion = lock_criterion(criterion)
        assignments_in(criterion).active().filter(annotator=annotator).update(
            status=Assignment.Status.EXPIRED
        )


def hit_size(criterion: CampaignCriterion) -> int:
    # Systems without outputs yet (a hosted system before it generates) do not count, or
    # they would make every item ineligible until they have output for it.
    active = (
        System.objects.filter(campaign_id=criterion.campaign_id, is_active=True)
        .filter(outputs__isnull=False)
        .distinct()
        .count()
    )
    return min(criterion.campaign.outputs_per_hit, active)


def eligible_items(criterion: CampaignCriterion, k: int) -> set[int]:
    """Items with outputs from at least k active systems."""
    if k < 2:
        return set()
    counts = (
        Output.objects.filter(item__campaign_id=criterion.campaign_id, system__is_active=True)
        .values("item")
        .annotate(n=Count("id"))
        .filter(n__gte=k)
    )
    return {row["item"] for row in counts}


def items_seen(annotator: Annotator, criterion: CampaignCriterion) -> set[int]:
    mine = assignments_in(criterion).filter(annotator=annotator)
    return set(mine.values_list("hit__item_id", flat=True))


def choose_item(annotator: Annotator, criterion: CampaignCriterion, k: int) -> Item | None:
    candidates = sorted(eligible_items(criterion, k) - items_seen(annotator, criterion))
    if not candidates:
        return None
    loads = dict(
        live_assignments(criterion)
        .values_list("hit__item")
        .annotate(n=Count("id"))
        .values_list("hit__item", "n")
    )
    fewest = min(loads.get(item_id, 0) for item_id in candidates)
    chosen = random.choice([i for i in candidates if loads.get(i, 0) == fewest])
    return Item.objects.get(pk=chosen)


def system_loads(criterion: CampaignCriterion, item: Item | None = None) -> dict[int, int]:
    """Live judgments (or open slots) per system in the criterion, or on one item only."""
    slots = HitOutput.objects.filter(hit__assignments__in=live_assignments(criterion))
    if item is not None:
        slots = slots.filter(hit__item=item)
    rows = slots.values("output__system").annotate(n=Count("id"))
    return {row["output__system"]: row["n"] for row in rows}


def choose_outputs(item: Item, criterion: CampaignCriterion, k: int) -> list[Output]:
    outputs = list(item.outputs.filter(system__is_active=True))
    overall, on_item = system_loads(criterion), system_loads(criterion, item)
    random.shuffle(outputs)  # the sort is stable: equal loads stay in random order
    outputs.sort(key=lambda o: (overall.get(o.system_id, 0), on_item.get(o.system_id, 0)))
    return outputs[:k]


def build_hit(item: Item, criterion: CampaignCriterion, k: int) -> Hit:
    outputs = choose_outputs(item, criterion, k)
    random.shuffle(outputs)
    hit = Hit.objects.create(campaign_id=item.campaign_id, criterion=criterion.criterion, item=item)
    HitOutput.objects.bulk_create(
        HitOutput(hit=hit, output=output, position=position)
        for position, output in enumerate(outputs, start=1)
    )
    return hit


def free_hit(item: Item, criterion: CampaignCriterion, k: int) -> Hit | None:
    """An earlier HIT of this item whose every assignment expired, showing active systems
    only and still of size k."""
    taken = Assignment.objects.filter(hit__item=item).exclude(status=Assignment.Status.EXPIRED)
    return (
        Hit.objects.filter(item=item, criterion=criterion.criterion)
        .exclude(pk__in=taken.values("hit"))
        .exclude(slots__output__system__is_active=False)
        .annotate(size=Count("slots"))
        .filter(size=k)
        .order_by("id")
        .first()
    )
