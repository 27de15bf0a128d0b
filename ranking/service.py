"""Between the database and the ranking engine: load judgments as arrays, store results.

Systems are numbered in order of first appearance in the judgments (HIT by HIT, position by
position), because the E2E protocol breaks ties in sigma by that order.
"""

import time
from collections.abc import Hashable, Iterable
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Generic, TypeVar

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.models import Campaign, CampaignCriterion, Judgment
from evalsite.jobs import Heartbeat, work_as_holder
from ranking.engine import Comparisons, Ranking, comparisons_from_hits, rank_systems
from ranking.engine.protocols import Progress

from .models import DEFAULT_REPETITIONS, Protocol, RankingRun, SystemResult


class NothingToRank(ValueError):
    pass


SystemKey = TypeVar("SystemKey", bound=Hashable)


@dataclass(frozen=True)
class RankingInput(Generic[SystemKey]):
    """What the engine ranks, and which system each of its numbers stands for: the
    database's system ids, or the system names of a bundle."""

    systems: list[SystemKey]
    comparisons: Comparisons
    judgments: int
    hits: int


@dataclass(frozen=True)
class ResultRow(Generic[SystemKey]):
    """One system's line of a ranking, best first: what a SystemResult stores."""

    position: int
    system: SystemKey
    cluster: int
    mu: float
    sigma: float
    mu_std: float
    rank_lo: int
    rank_hi: int
    comparisons: int


# One submitted assignment's judgments: (system index, score) per slot, in slot order.
Scores = list[tuple[int, float]]

# The order in which a ranking reads judgments: HIT by HIT, position by position. Systems
# are numbered in this order, so the ranking depends on it (see the module's docstring).
JUDGMENT_ORDER = ("assignment__hit_id", "assignment_id", "slot__position")


def load_ranking_input(criterion: CampaignCriterion) -> RankingInput[int]:
    rows = (
        Judgment.objects.counted()
        .for_criterion(criterion)
        .order_by(*JUDGMENT_ORDER)
        .values_list("assignment_id", "slot__output__system_id", "score")
    )
    return ranking_input_from_rows(rows.iterator(chunk_size=10_000))


def ranking_input_from_rows(
    rows: Iterable[tuple[Hashable, SystemKey, float]],
) -> RankingInput[SystemKey]:
    """The engine's input from counted judgments as (assignment, system, score) rows in
    JUDGMENT_ORDER. The database and a bundle both come through here, so the same rows
    give the same input, numbering included."""
    assignments: dict[Hashable, Scores] = {}
    system_index: dict[SystemKey, int] = {}
    for assignment, system, score in rows:
        index = system_index.setdefault(system, len(system_index))
        assignments.setdefault(assignment, []).append((index, score))
    systems, scores = hit_arrays(list(assignments.values()))
    return RankingInput(
        systems=list(system_index),
        comparisons=comparisons_from_hits(systems, scores),
        judgments=sum(len(judged) for judged in assignments.values()),
        hits=len(assignments),
    )


def hit_arrays(assignments: list[Scores]) -> tuple[np.ndarray, np.ndarray]:
    """(H, k) arrays of system indices and scores, a row per assignment; shorter rows
    padded with -1 and NaN."""
    width = max((len(judged) for judged in assignments), default=0)
    systems = np.full((len(assignments), width), -1, dtype=np.int32)
    scores = np.full((len(assignments), width), np.nan)
    for row, judged in enumerate(assignments):
        systems[row, : len(judged)] = [index for index, _ in judged]
        scores[row, : len(judged)] = [score for _, score in judged]
    return systems, scores


def rank_input(
    data: RankingInput,
    protocol: str,
    repetitions: int,
    seed: int,
    progress: Progress | None = None,
) -> Ranking:
    """Rank what `data` holds: a stored run and its re-ranking from a bundle both call this."""
    if len(data.systems) < 2 or len(data.comparisons.winner) == 0:
        raise NothingToRank("no comparisons yet: judgments of at least two systems are needed")
    return rank_systems(
        data.comparisons,
        len(data.systems),
        protocol=protocol,
        runs=repetitions,
        seed=seed,
        progress=progress,
    )


def result_rows(data: RankingInput[SystemKey], ranking: Ranking) -> list[ResultRow[SystemKey]]:
    return [
        ResultRow(
            position=position,
            system=data.systems[index],
            cluster=int(ranking.cluster[index]),
            mu=float(ranking.mean_mu[index]),
            sigma=float(ranking.mean_sigma[index]),
            mu_std=float(ranking.std_mu[index]),
            rank_lo=int(ranking.rank_lo[index]),
            rank_hi=int(ranking.rank_hi[index]),
            comparisons=int(ranking.n_comparisons[index]),
        )
        for position, index in enumerate(ranking.order, start=1)
    ]


# Queueing -----------------------------------------------------------------------------------


def request_ranking(
    campaign: Campaign,
    criterion_name: str,
    protocol: str = Protocol.E2E,
    repetitions: int = DEFAULT_REPETITIONS,
    seed: int = 0,
) -> RankingRun:
    """Create a queued run and send it to a worker once this transaction commits."""
    run = RankingRun.objects.create(
        campaign=campaign,
        criterion=criterion_name,
        protocol=protocol,
        repetitions=repetitions,
        seed=seed,
    )
    run.send_to_worker()
    return run


def queue_due_rankings() -> list[RankingRun]:
    """The sweep: a run per protocol for every criterion whose judgments changed since the
    input of its latest run, unless one is waiting or one was queued less than the
    debounce interval ago, so a burst of submitted HITs leads to few recomputations."""
    queued = []
    changed = CampaignCriterion.objects.filter(judgments_version__gt=0).values_list("pk", flat=True)
    for criterion_id in changed:
        with transaction.atomic():
            # Two sweeps (two beats by mistake, a manual one) must not both queue a run.
            criterion = (
                CampaignCriterion.objects.select_for_update(of=("self",), skip_locked=True)
                .select_related("campaign")
                .filter(pk=criterion_id)
                .first()
            )
            if criterion is not None:
                queued += [
                    request_ranking(criterion.campaign, criterion.criterion, protocol)
                    for protocol in Protocol.values
                    if ranking_is_due(criterion, protocol)
                ]
    return queued


def ranking_is_due(criterion: CampaignCriterion, protocol: str) -> bool:
    runs = RankingRun.objects.for_criterion(criterion, protocol)
    covered = runs.aggregate(version=Max("judgments_version"))["version"] or 0
    if criterion.judgments_version <= covered or runs.pending().exists():
        return False
    debounce = timezone.now() - timedelta(seconds=settings.RANKING_DEBOUNCE_SECONDS)
    return not runs.filter(queued_at__gt=debounce).exists()


# Running ------------------------------------------------------------------------------------


def execute_run(run: RankingRun) -> bool:
    """Compute a run and store its results; False if another worker has it or took it."""
    token = run.claim(progress=0)
    if token is None:
        return False
    return work_as_holder(
        run,
        token,
        lambda heartbeat: compute_and_store(run, token, heartbeat),
        expected=(NothingToRank,),
    )


def compute_and_store(run: RankingRun, token: str, heartbeat: Heartbeat) -> None:
    started = time.perf_counter()
    # Read before the judgments (with its version): the run then covers at least that one.
    criterion = CampaignCriterion.objects.filter(
        campaign_id=run.campaign_id, criterion=run.criterion
    ).first()
    if criterion is None:
        raise NothingToRank(f"the campaign has no {run.criterion} criterion")
    data = load_ranking_input(criterion)
    run.update_as_holder(token, judgments_version=criterion.judgments_version)
    loaded = time.perf_counter()
    ranking = rank_input(
        data,
        run.protocol,
        run.repetitions,
        run.seed,
        progress=progress_writer(run, token, heartbeat),
    )
    computed = time.perf_counter()
    store_results(run, token, data, ranking, loaded - started, computed - loaded)


def progress_writer(run: RankingRun, token: str, heartbeat: Heartbeat):
    def write(done: int, total: int) -> None:
        heartbeat.check()
        run.update_as_holder(token, progress=done)

    return write


@transaction.atomic
def store_results(run, token, data: RankingInput, ranking, load_seconds, compute_seconds) -> None:
    """Mark the run done and write its results, together, and only while this worker holds
    the claim: a late finisher whose run was taken over writes nothing."""
    run.finish_as_holder(
        token,
        RankingRun.Status.DONE,
        progress=run.repetitions,
        judgments=data.judgments,
        hits=data.hits,
        comparisons=len(data.comparisons.winner),
        load_seconds=load_seconds,
        compute_seconds=compute_seconds,
        error="",
    )
    SystemResult.objects.bulk_create(
        SystemResult(run=run, **result_fields(row)) for row in result_rows(data, ranking)
    )


def result_fields(row: ResultRow[int]) -> dict:
    fields = asdict(row)
    fields["system_id"] = fields.pop("system")
    return fields
