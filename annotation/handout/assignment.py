"""Handing out HITs: which item, which systems, and to whom.

A HIT is made when an annotator asks for work (so systems that gain outputs later appear
in new HITs at once), or an earlier HIT whose assignment expired is given out again.

Size: k is the campaign's outputs per HIT, or the number of its active systems that have
outputs while that is smaller (at least 2); an item is given out once it has outputs from k
active systems.

Attention checks: an annotator's first HIT in a criterion, then one in the campaign's
`attention_check_every`, shows one more sentence, a degraded copy of one of its outputs
(nlgdata.degrade); it is not an output of its system and counts in no load (attention.py).

Balance: the item is the one with the fewest live assignments (submitted and counted, or
still open) among those the annotator has not seen in this criterion; its k outputs come
from the k active systems with the fewest live judgments in the criterion, then those
least often shown with this item, ties at random. Under active composition (composition.py)
the criterion's systems are those that more judgments can tell apart, but for a share of
balanced HITs; the HIT records which policy chose them.

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
from django.db.models import Count, Min
from django.utils import timezone

from annotation.judging import form_of
from annotation.models import (
    Annotator,
    Assignment,
    AssignmentQuerySet,
    CampaignCriterion,
    Hit,
    HitOutput,
    Output,
    original_q,
)
from nlgdata.degrade import degrade
from nlgdata.text import normalise

from . import sql
from .composition import choose_outputs
from .loads import sync_pool

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
    return Assignment.objects.for_criterion(criterion)


def active_assignment(annotator: Annotator, criterion: CampaignCriterion) -> Assignment | None:
    return assignments_in(criterion).active().filter(annotator=annotator).first()


def hits_taken(annotator: Annotator, criterion: CampaignCriterion) -> int:
    """HITs that count towards the annotator's limit: submitted or open."""
    mine = assignments_in(criterion).filter(annotator=annotator)
    return mine.exclude(status=Assignment.Status.EXPIRED).count()


def hits_submitted(annotator: Annotator, criterion: CampaignCriterion) -> int:
    return sql.submitted_count(annotator.pk, criterion.pk)


def expire_abandoned(criterion: CampaignCriterion, now=None) -> int:
    """Give the HITs of assignments past their timeout back to the pool."""
    stale = sql.open_hits(criterion, expired_by=now or timezone.now())
    return end_assignments(criterion, stale)


def expire_when_due(criterion: CampaignCriterion, now) -> None:
    """Expire abandoned assignments once the earliest time one can expire has passed, then
    note the next such time: no query at all while none can have expired."""
    due = criterion.next_expiry_at
    if due is not None and due > now:
        return
    expire_abandoned(criterion, now)
    next_expiry = assignments_in(criterion).active().aggregate(first=Min("expires_at"))["first"]
    note_next_expiry(criterion, next_expiry, always=True)


def note_next_expiry(criterion: CampaignCriterion, expires_at, always: bool = False) -> None:
    """Keep `next_expiry_at` a lower bound of the open assignments' expiry times."""
    current = criterion.next_expiry_at
    if always or (expires_at is not None and (current is None or expires_at < current)):
        criterion.next_expiry_at = expires_at
        CampaignCriterion.objects.filter(pk=criterion.pk).update(next_expiry_at=expires_at)


def end_assignments(criterion: CampaignCriterion, open_hits: dict) -> int:
    """Open assignments that stop (sql.open_hits): their HITs go back to the pool; how many
    stopped. Call under the criterion's lock."""
    if not open_hits:
        return 0
    # One HIT's writes per round trip: two HITs' may change the same load rows, which
    # run_together cannot do in one statement.
    per_hit = [
        sql.load_shifts(criterion.pk, item_id, systems, live=-1, free=+1)
        for item_id, systems in open_hits.values()
    ]
    per_hit[-1].append(sql.expire(list(open_hits)))
    for writes in per_hit:
        sql.run_together(writes)
    return len(open_hits)


def next_assignment(
    annotator: Annotator, criterion: CampaignCriterion, now=None
) -> Assignment | None:
    """The annotator's open assignment in this criterion, or a new one; None when there is
    no more work for them (limit reached, criterion closed, or every item seen)."""
    with transaction.atomic():
        return hand_out(annotator.pk, lock_criterion(criterion), now)


def hand_out(annotator_id: int, criterion: CampaignCriterion, now=None) -> Assignment | None:
    """next_assignment's work, inside a transaction that holds the criterion's lock (taken
    by `lock_criterion`, or by a view that locks first and does more under it); the
    annotator is one of the criterion's campaign."""
    now = now or timezone.now()
    criterion = sync_pool(criterion)
    expire_when_due(criterion, now)
    mine = Mine.of(annotator_id, criterion)
    if mine.open is not None:
        return Assignment.objects.get(pk=mine.open)
    campaign = criterion.campaign
    if not criterion.is_open or campaign.status != campaign.Status.OPEN:
        return None
    if mine.taken >= campaign.max_hits_per_annotator:
        return None
    check = attention_check_due(campaign.attention_check_every, mine.taken, mine.checked)
    hit, systems, reused = next_hit(mine, criterion, check)
    if hit is None:
        return None
    timeout = timedelta(minutes=campaign.assignment_timeout_minutes)
    assignment = Assignment(
        hit=hit, annotator_id=annotator_id, started_at=now, expires_at=now + timeout
    )
    taken = sql.load_shifts(criterion.pk, hit.item_id, systems, live=+1, free=-int(reused))
    sql.insert([assignment], also=taken)
    note_next_expiry(criterion, assignment.expires_at)
    return assignment


@dataclass(frozen=True)
class Mine:
    """What the hand-out needs of the annotator's own assignments in the criterion, read
    in one query (at most the HIT limit of rows) through the annotator's index."""

    open: int | None
    taken: int
    seen: frozenset[int]
    checked: int  # HITs taken that carry an attention check

    @classmethod
    def of(cls, annotator_id: int, criterion: CampaignCriterion) -> "Mine":
        # An annotator belongs to one campaign: no need to name it (a join the planner
        # might start from the campaign's HITs).
        rows = sql.annotator_assignments(annotator_id, criterion.pk)
        active = [pk for pk, status, _, _ in rows if status == Assignment.Status.ASSIGNED]
        kept = [check for _, status, _, check in rows if status != Assignment.Status.EXPIRED]
        seen = frozenset(item_id for _, _, item_id, _ in rows)
        return cls(active[0] if active else None, len(kept), seen, sum(kept))


def attention_check_due(every: int, taken: int, checked: int) -> bool:
    """Whether the annotator's next HIT should carry an attention check: their first, then
    one in `every`, counting the checks that HITs given out again happened to carry."""
    return every > 0 and checked * every < taken + 1


def next_hit(
    mine: Mine, criterion: CampaignCriterion, check: bool = False
) -> tuple[Hit | None, list[int], bool]:
    """A HIT for the annotator (with an attention check if `check`), the systems it shows,
    and whether it is an earlier HIT given out again; (None, [], False) when there is none."""
    k = criterion.hit_size
    if k < form_of(criterion).fewest_outputs:
        return None, [], False
    chosen = choose_item(mine.seen, criterion)
    if chosen is None:
        return None, [], False
    if chosen.free:
        hit = free_hit(chosen.item_id, criterion, k, check)
        if hit is not None:
            return hit, sql.slot_systems(hit.pk), True
    outputs, policy = choose_outputs(chosen.item_id, criterion, k)
    hit = build_hit(chosen.item_id, criterion, outputs, policy, check)
    return hit, [o.system_id for o in outputs], False


def release(annotator: Annotator, criterion: CampaignCriterion) -> None:
    """The annotator stops: their open HIT goes back to the pool at once."""
    with transaction.atomic():
        hand_back(annotator.pk, lock_criterion(criterion))


def hand_back(annotator_id: int, criterion: CampaignCriterion) -> None:
    """release's work, inside a transaction that holds the criterion's lock: the
    annotator's open assignments expire, and their HITs are free to give out again."""
    end_assignments(criterion, sql.open_hits(criterion, annotator_id=annotator_id))


@dataclass(frozen=True)
class ChosenItem:
    item_id: int
    live: int
    free: int  # its HITs free to give out again (see ItemLoad.free)


def choose_item(seen: frozenset[int], criterion: CampaignCriterion) -> ChosenItem | None:
    """The eligible item with the fewest live assignments among those not `seen`; ties at
    random among the first rows of the index."""
    lowest = sql.lowest_items(criterion.pk, seen, CANDIDATES)
    if not lowest:
        return None
    fewest = lowest[0][1]
    return ChosenItem(*random.choice([row for row in lowest if row[1] == fewest]))


def build_hit(
    item_id: int,
    criterion: CampaignCriterion,
    outputs: list[Output],
    composition: str,
    check: bool = False,
) -> Hit:
    """A new HIT showing `outputs` in random order, composed by the policy `composition`,
    and with `check` a degraded copy of one of them at a random position among them."""
    hit = Hit(
        campaign_id=criterion.campaign_id,
        criterion_id=criterion.pk,
        item_id=item_id,
        composition=composition,
    )
    sql.insert([hit])
    slots = [HitOutput(hit=hit, output=output) for output in outputs]
    if check:
        slots.append(attention_check_slot(hit, outputs))
    random.shuffle(slots)
    for position, slot in enumerate(slots, start=1):
        slot.position = position
    sql.insert(slots)
    return hit


def attention_check_slot(hit: Hit, outputs: list[Output]) -> HitOutput:
    """A degraded copy of one of the outputs, unlike every one of them where it can be."""
    texts = {normalise(output.text) for output in outputs}
    for output in random.sample(outputs, len(outputs)):
        copy = degrade(output.text, random.Random())
        if normalise(copy) not in texts:
            break
    return HitOutput(hit=hit, output=output, degraded_text=copy)


def free_hit(item_id: int, criterion: CampaignCriterion, k: int, check: bool) -> Hit | None:
    """An earlier HIT of this item whose every assignment expired, showing active systems
    only and still of size k; with `check`, one that carries an attention check (else a new
    HIT is made, and this one waits for another annotator)."""
    taken = Assignment.objects.filter(hit__item_id=item_id).exclude(
        status=Assignment.Status.EXPIRED
    )
    free = (
        Hit.objects.for_criterion(criterion)
        .filter(item_id=item_id)
        .exclude(pk__in=taken.values("hit"))
        .exclude(slots__output__system__is_active=False)
        .annotate(
            size=Count("slots", filter=original_q("slots__")),
            checks=Count("slots", filter=~original_q("slots__")),
        )
        .filter(size=k)
    )
    if check:
        free = free.filter(checks__gt=0)
    return free.order_by("id").first()
