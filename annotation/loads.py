"""The counts that the hand-out balances on, kept up to date instead of recomputed.

An assignment is *live* while it is open, or submitted and counted (unflagged, annotator not
excluded). Balance needs, per criterion, each item's live assignments (`ItemLoad`) and each
system's live slots (`SystemLoad`). Every change that makes assignments live or not live
(hand-out, expiry, release, a flagged submission, exclusion and its reversal, a cleared
flag, an import) shifts these counts in its own transaction, under the criterion's row lock
where the hand-out needs it, so a hand-out reads a few rows whatever the campaign's size.

Which items can be given out (outputs from `hit_size` active systems) changes only when
outputs, systems or the HIT size change; those changes bump the criterion's `pool_version`
and the next hand-out brings the item rows up to date once (`sync_pool`).
"""

from collections import Counter

from django.db.models import Count, F, QuerySet

from .models import (
    Assignment,
    CampaignCriterion,
    HitOutput,
    Item,
    ItemLoad,
    Output,
    System,
    SystemLoad,
)


def lock_criteria(criteria: QuerySet) -> list[CampaignCriterion]:
    """Take the row locks of several criteria, in one order so two callers never deadlock;
    call inside `transaction.atomic()`."""
    return list(criteria.select_for_update(of=("self",)).order_by("pk"))


def shift_loads(criterion: CampaignCriterion, assignments: QuerySet, sign: int) -> None:
    """Add `sign` (+1 or -1) to the loads of the items and systems of `assignments`, which
    have just become live (+1) or stopped being live (-1) in `criterion`."""
    per_item = Counter(assignments.values_list("hit__item_id", flat=True))
    slots = HitOutput.objects.filter(hit__assignments__in=assignments)
    per_system = Counter(slots.values_list("output__system_id", flat=True))
    _add(ItemLoad.objects.filter(criterion=criterion), "item_id", per_item, sign)
    _add(SystemLoad.objects.filter(criterion=criterion), "system_id", per_system, sign)


def _add(loads: QuerySet, key: str, counts: Counter, sign: int) -> None:
    # One UPDATE per distinct count: a HIT's k systems all move by one, in one statement.
    by_count: dict[int, list[int]] = {}
    for pk, n in counts.items():
        by_count.setdefault(n, []).append(pk)
    for n, pks in by_count.items():
        loads.filter(**{f"{key}__in": pks}).update(live=F("live") + sign * n)


def sync_pool(criterion: CampaignCriterion) -> CampaignCriterion:
    """Bring the item and system rows and the HIT size up to date if outputs, systems or
    the HIT size changed since the last hand-out; the first time, count the loads too."""
    if criterion.pool_synced_version == criterion.pool_version:
        return criterion
    first_time = criterion.pool_synced_version == 0
    criterion.hit_size = compute_hit_size(criterion)
    mark_eligible_items(criterion)
    if first_time:
        recount_loads(criterion)
    criterion.pool_synced_version = criterion.pool_version
    criterion.save(update_fields=["hit_size", "pool_synced_version"])
    return criterion


def compute_hit_size(criterion: CampaignCriterion) -> int:
    # Systems without outputs yet (a hosted system before it generates) do not count, or
    # they would make every item ineligible until they have output for it.
    active = (
        System.objects.filter(campaign_id=criterion.campaign_id, is_active=True)
        .filter(outputs__isnull=False)
        .distinct()
        .count()
    )
    return min(criterion.campaign.outputs_per_hit, active)


def mark_eligible_items(criterion: CampaignCriterion) -> None:
    campaign_id, k = criterion.campaign_id, criterion.hit_size
    items = Item.objects.filter(campaign_id=campaign_id).values_list("pk", flat=True)
    ItemLoad.objects.bulk_create(
        [ItemLoad(criterion=criterion, item_id=pk) for pk in items], ignore_conflicts=True
    )
    systems = System.objects.filter(campaign_id=campaign_id).values_list("pk", flat=True)
    SystemLoad.objects.bulk_create(
        [SystemLoad(criterion=criterion, system_id=pk) for pk in systems], ignore_conflicts=True
    )
    eligible = (
        Output.objects.filter(item__campaign_id=campaign_id, system__is_active=True)
        .values("item")
        .annotate(n=Count("id"))
        .filter(n__gte=max(k, 2))
        .values("item")
    )
    loads = ItemLoad.objects.filter(criterion=criterion)
    loads.exclude(item__in=eligible).update(eligible=False)
    loads.filter(item__in=eligible).update(eligible=True)


def recount_loads(criterion: CampaignCriterion) -> None:
    """Count every load again from the assignments: for the first hand-out of a criterion,
    after a bulk import, and to check the kept counts (the tests compare the two)."""
    live = Assignment.objects.filter(
        hit__campaign_id=criterion.campaign_id, hit__criterion=criterion.criterion
    ).live()
    per_item = dict(live.values_list("hit__item").annotate(n=Count("id")))
    slots = HitOutput.objects.filter(hit__assignments__in=live)
    per_system = dict(slots.values_list("output__system").annotate(n=Count("id")))
    _set(ItemLoad, criterion, "item_id", per_item)
    _set(SystemLoad, criterion, "system_id", per_system)


def _set(model, criterion: CampaignCriterion, key: str, counts: dict[int, int]) -> None:
    rows = {getattr(row, key): row for row in model.objects.filter(criterion=criterion)}
    missing = [model(criterion=criterion, **{key: pk}) for pk in counts if pk not in rows]
    for row in model.objects.bulk_create(missing):
        rows[getattr(row, key)] = row
    for pk, row in rows.items():
        row.live = counts.get(pk, 0)
    model.objects.bulk_update(rows.values(), ["live"], batch_size=2000)


def kept_loads(criterion: CampaignCriterion) -> tuple[dict[int, int], dict[int, int]]:
    """The kept counts, item -> live and system -> live, without zeros (for checks)."""
    items = ItemLoad.objects.filter(criterion=criterion, live__gt=0)
    systems = SystemLoad.objects.filter(criterion=criterion, live__gt=0)
    return (
        dict(items.values_list("item_id", "live")),
        dict(systems.values_list("system_id", "live")),
    )
