"""The criterion's online estimate and the composition of new HITs (the policy itself is
pure: nlgdata/composition.py).

The estimate is TrueSkill's (mu, sigma) per system, with the comparisons each has had, kept
as `CampaignCriterion.estimates` (system id -> [mu, sigma, comparisons]): a row per system
folded into the criterion's row. Both the hand-out and the submission hold that row locked
and have read it already, so reading the estimate costs them no query, and a counted
submission writes its k systems' new estimates in the statement that records the judgments
change: the active policy adds no query to any request, and two submissions never update
from the same estimate (the lock orders them).

A ranking run recomputes the estimate from every counted judgment (`reset_estimates`), which
also takes in what the online updates cannot see (flags cleared, annotators excluded or
taken back, imported ratings). It reads without a lock and writes as a compare-and-set on
the judgments version: if a submission came meanwhile it writes nothing (the online
updates go on, and the next run resets), so it never holds up a submission.
"""

from collections import Counter
from collections.abc import Iterable

from django.db import transaction

from annotation.models import CampaignCriterion, Judgment, Output
from nlgdata.composition import (
    Candidate,
    Rating,
    compared,
    comparisons_per_pair,
    compose,
    rate_hit,
)

from . import sql

Estimates = dict[str, list[float]]  # as stored: system id (a JSON key) -> [mu, sigma, n]


def ratings_of(estimates: Estimates) -> dict[int, Rating]:
    return {int(system): (mu, sigma) for system, (mu, sigma, _) in estimates.items()}


def choose_outputs(item_id: int, criterion: CampaignCriterion, k: int) -> tuple[list[Output], str]:
    """k of the item's outputs of active systems for a new HIT, and the policy that chose
    them (the criterion's, or `balanced` for the balanced share of an active criterion and
    once it has had its active comparisons): one query over the item's outputs and their
    kept loads."""
    ratings = ratings_of(criterion.estimates)
    outputs, candidates = {}, []
    for output_id, system, text, load, load_on_item in sql.item_outputs(criterion.pk, item_id):
        outputs[system] = Output(id=output_id, item_id=item_id, system_id=system, text=text)
        candidates.append(Candidate(system, load, load_on_item, ratings.get(system)))
    share = criterion.balanced_share / 100
    per_pair = comparisons_per_pair(int(n) for _, _, n in criterion.estimates.values())
    chosen, policy = compose(candidates, k, criterion.composition, share, per_pair=per_pair)
    return [outputs[c.key] for c in chosen], policy


def estimates_after(criterion: CampaignCriterion, scores: list[tuple[int, float]]) -> Estimates:
    """The criterion's estimates with one counted HIT's (system, score) per slot, in slot
    order, taken in; read under the criterion's lock (the submission holds it)."""
    estimates = dict(criterion.estimates)
    ratings = {s: r for s, r in ratings_of(estimates).items() if s in {x for x, _ in scores}}
    rate_hit(ratings, scores)
    for system, n in compared(scores).items():
        mu, sigma = ratings[system]
        before = estimates.get(str(system), [0.0, 0.0, 0])[2]
        estimates[str(system)] = [mu, sigma, before + n]
    return estimates


def replayed_estimates(rows: Iterable[tuple[int, int, float]]) -> Estimates:
    """The estimates from (assignment, system, score) rows in ranking order, applied HIT by
    HIT as the online updates would have."""
    ratings: dict[int, Rating] = {}
    counts: Counter = Counter()
    hit: list[tuple[int, float]] = []
    current = None
    for assignment, system, score in rows:
        if assignment != current:
            counts.update(compared(hit))
            rate_hit(ratings, hit)
            hit, current = [], assignment
        hit.append((system, score))
    counts.update(compared(hit))
    rate_hit(ratings, hit)
    return {str(s): [mu, sigma, counts[s]] for s, (mu, sigma) in ratings.items()}


def reset_estimates(criterion: CampaignCriterion) -> bool:
    """Recompute the criterion's estimates from every counted judgment; False (nothing
    written) when its judgments changed while they were read."""
    criteria = CampaignCriterion.objects.filter(pk=criterion.pk)
    version = criteria.values_list("judgments_version", flat=True).get()
    rows = (
        Judgment.objects.counted()
        .for_criterion(criterion)
        .in_ranking_order()
        .values_list("assignment_id", "slot__output__system_id", "score")
    )
    return reset_estimates_from(criterion, version, rows.iterator(chunk_size=10_000))


def reset_estimates_from(
    criterion: CampaignCriterion, version: int, rows: Iterable[tuple[int, int, float]]
) -> bool:
    """reset_estimates from rows the caller has read after reading `version`: the counted
    judgments as (assignment, system, score) in ranking order (the ranking worker has them
    already); False (nothing written) when the judgments changed since that version."""
    criteria = CampaignCriterion.objects.filter(pk=criterion.pk)
    estimates = replayed_estimates(rows)
    with transaction.atomic():
        # A submission holding the lock is about to change the judgments: do not wait for it.
        unchanged = criteria.select_for_update(skip_locked=True).filter(judgments_version=version)
        return bool(unchanged.exists() and criteria.update(estimates=estimates))
