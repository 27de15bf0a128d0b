"""The counts that the hand-out balances on, kept up to date instead of recomputed.

An assignment is *live* while it is open, or submitted and counted (unflagged, annotator not
excluded). Balance needs, per criterion, each item's live assignments (`ItemLoad`), each
system's live slots (`SystemLoad`) and each system's live slots on each item
(`ItemSystemLoad`); an attention check is no system's slot. Every change that makes
assignments live or not live (hand-out, expiry, release, a flagged submission, exclusion
and its reversal, a cleared flag, an import) shifts these counts in its own transaction,
under the criterion's row lock where the hand-out needs it, so a hand-out reads a few rows
whatever the campaign's size.

Which items can be given out (outputs from `hit_size` active systems) changes only when
outputs, systems or the HIT size change; those changes bump the criterion's `pool_version`
and the next hand-out brings the item rows up to date once (`sync_pool`).
"""

from collections import Counter

from django.db.models import Count, F, Q, QuerySet

from annotation.judging import form_of
from annotation.models import (
    Assignment,
    CampaignCriterion,
    Hit,
    HitOutput,
    Item,
    ItemLoad,
    ItemSystemLoad,
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
    slots = HitOutput.objects.originals().filter(hit__assignments__in=assignments)
    pairs = list(slots.values_list("hit__item_id", "output__system_id"))
    _add(ItemLoad.objects.filter(criterion=criterion), per_item, sign, "item_id")
    per_system = Counter(system for _, system in pairs)
    _add(SystemLoad.objects.filter(criterion=criterion), per_system, sign, "system_id")
    per_pair = Counter(pairs)
    _add(ItemSystemLoad.objects.filter(criterion=criterion), per_pair, sign, "item_id", "system_id")


def _add(loads: QuerySet, counts: Counter, sign: int, *keys: str) -> None:
    # One UPDATE per distinct count: a HIT's k systems all move by one, in one statement.
    for n, pks in _by_count(counts).items():
        if len(keys) == 1:
            which = Q(**{f"{keys[0]}__in": pks})
        else:
            which = Q()
            for key_values in pks:
                which |= Q(**dict(zip(keys, key_values, strict=True)))
        loads.filter(which).update(live=F("live") + sign * n)


def _by_count(counts: Counter) -> dict[int, list]:
    by_count: dict[int, list] = {}
    for key, n in counts.items():
        by_count.setdefault(n, []).append(key)
    return by_count


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
    return min(form_of(criterion).outputs_per_hit(criterion), active)


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
    pairs = Output.objects.filter(item__campaign_id=campaign_id).values_list("item_id", "system_id")
    ItemSystemLoad.objects.bulk_create(
        (
            ItemSystemLoad(criterion=criterion, item_id=item, system_id=system)
            for item, system in pairs
        ),
        ignore_conflicts=True,
        batch_size=5000,
    )
    eligible = (
        Output.objects.filter(item__campaign_id=campaign_id, system__is_active=True)
        .values("item")
        .annotate(n=Count("id"))
        .filter(n__gte=max(k, form_of(criterion).fewest_outputs))
        .values("item")
    )
    loads = ItemLoad.objects.filter(criterion=criterion)
    loads.exclude(item__in=eligible).update(eligible=False)
    loads.filter(item__in=eligible).update(eligible=True)


def recount_loads(criterion: CampaignCriterion) -> None:
    """Count every load again from the assignments: for the first hand-out of a criterion,
    after a bulk import, and to check the kept counts (the tests compare the two)."""
    live = Assignment.objects.for_criterion(criterion).live()
    per_item = dict(live.values_list("hit__item").annotate(n=Count("id")))
    slots = HitOutput.objects.originals().filter(hit__assignments__in=live)
    per_system = dict(slots.values_list("output__system").annotate(n=Count("id")))
    per_pair = {
        (item, system): n
        for item, system, n in slots.values_list("hit__item", "output__system").annotate(
            n=Count("id")
        )
    }
    _set(ItemLoad, criterion, ("item_id",), {(pk,): n for pk, n in per_item.items()})
    _set(SystemLoad, criterion, ("system_id",), {(pk,): n for pk, n in per_system.items()})
    _set(ItemSystemLoad, criterion, ("item_id", "system_id"), per_pair)
    _set(ItemLoad, criterion, ("item_id",), free_hits(criterion), field="free")


def free_hits(criterion: CampaignCriterion) -> dict[tuple, int]:
    """(item,) -> its HITs in the criterion that were given out and whose every assignment
    expired."""
    hits = Hit.objects.for_criterion(criterion)
    free = hits.annotate(
        given=Count("assignments"),
        taken=Count("assignments", filter=~Q(assignments__status=Assignment.Status.EXPIRED)),
    ).filter(given__gt=0, taken=0)
    per_item = Counter(free.values_list("item_id", flat=True))
    return {(pk,): n for pk, n in per_item.items()}


def _set(model, criterion, keys: tuple[str, ...], counts: dict[tuple, int], field="live") -> None:
    rows = {
        tuple(getattr(row, key) for key in keys): row
        for row in model.objects.filter(criterion=criterion)
    }
    missing = [
        model(criterion=criterion, **dict(zip(keys, values, strict=True)))
        for values in counts
        if values not in rows
    ]
    for row in model.objects.bulk_create(missing):
        rows[tuple(getattr(row, key) for key in keys)] = row
    for values, row in rows.items():
        setattr(row, field, counts.get(values, 0))
    model.objects.bulk_update(rows.values(), [field], batch_size=2000)
