"""Between the database and the ranking engine: load judgments as arrays, store results.

Systems are numbered in order of first appearance in the judgments (HIT by HIT, position by
position), because the E2E protocol breaks ties in sigma by that order.
"""

import logging
import time
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Campaign, CampaignCriterion, Judgment
from ranking.engine import Comparisons, comparisons_from_hits, rank_systems

from .models import Protocol, RankingRun, SystemResult

log = logging.getLogger(__name__)


class NothingToRank(ValueError):
    pass


@dataclass(frozen=True)
class RankingInput:
    system_ids: list[int]
    comparisons: Comparisons
    judgments: int
    hits: int


def load_ranking_input(campaign: Campaign, criterion: str) -> RankingInput:
    rows = (
        Judgment.objects.counted()
        .for_criterion(campaign, criterion)
        .order_by("assignment__hit_id", "assignment_id", "slot__position")
        .values_list("assignment_id", "slot__output__system_id", "score")
    )
    pages: dict[int, list[tuple[int, float]]] = {}
    system_index: dict[int, int] = {}
    for assignment_id, system_id, score in rows.iterator(chunk_size=10_000):
        index = system_index.setdefault(system_id, len(system_index))
        pages.setdefault(assignment_id, []).append((index, score))
    systems, scores = hit_arrays(list(pages.values()))
    return RankingInput(
        system_ids=list(system_index),
        comparisons=comparisons_from_hits(systems, scores),
        judgments=sum(len(page) for page in pages.values()),
        hits=len(pages),
    )


def hit_arrays(pages: list[list[tuple[int, float]]]) -> tuple[np.ndarray, np.ndarray]:
    """(H, k) arrays of system indices and scores; shorter pages padded with -1 and NaN."""
    width = max((len(page) for page in pages), default=0)
    systems = np.full((len(pages), width), -1, dtype=np.int32)
    scores = np.full((len(pages), width), np.nan)
    for row, page in enumerate(pages):
        systems[row, : len(page)] = [index for index, _ in page]
        scores[row, : len(page)] = [score for _, score in page]
    return systems, scores


# Queueing -----------------------------------------------------------------------------------


def request_ranking(
    campaign: Campaign,
    criterion: str,
    protocol: str = Protocol.E2E,
    runs: int = 200,
    seed: int = 0,
    countdown: int = 0,
) -> RankingRun:
    """Create a queued run and send it to a worker once this transaction commits."""
    run = RankingRun.objects.create(
        campaign=campaign, criterion=criterion, protocol=protocol, runs=runs, seed=seed
    )
    send_to_worker(run, countdown)
    return run


def send_to_worker(run: RankingRun, countdown: int = 0) -> None:
    from .tasks import compute_ranking  # the task module imports this one

    transaction.on_commit(
        lambda: compute_ranking.apply_async(kwargs={"run_id": run.pk}, countdown=countdown)
    )


def schedule_recompute(campaign_id: int, criterion: str) -> None:
    """After new judgments: queue one run per protocol unless one is already waiting, and
    start it after a delay, so a burst of submitted HITs leads to one recomputation."""
    with transaction.atomic():
        task = CampaignCriterion.objects.select_for_update().filter(
            campaign_id=campaign_id, criterion=criterion
        )
        if not task.exists():
            return
        campaign = Campaign.objects.get(pk=campaign_id)
        for protocol in Protocol.values:
            waiting = RankingRun.objects.for_task(campaign, criterion, protocol).filter(
                status=RankingRun.Status.QUEUED
            )
            if not waiting.exists():
                request_ranking(
                    campaign, criterion, protocol, countdown=settings.RANKING_DEBOUNCE_SECONDS
                )


# Running ------------------------------------------------------------------------------------


def execute_run(run: RankingRun) -> bool:
    """Compute a run and store its results; False if another worker has it."""
    stale_after = timedelta(minutes=settings.RANKING_STALE_MINUTES)
    if not run.claim(stale_after, progress=0):
        return False
    try:
        compute_and_store(run)
    except Exception as error:
        log.exception("ranking run %s failed", run.pk)
        RankingRun.objects.filter(pk=run.pk).update(
            status=RankingRun.Status.FAILED, finished_at=timezone.now(), error=str(error)[:2000]
        )
        if not isinstance(error, NothingToRank):
            raise
    return True


def compute_and_store(run: RankingRun) -> None:
    started = time.perf_counter()
    data = load_ranking_input(run.campaign, run.criterion)
    if len(data.system_ids) < 2 or len(data.comparisons.winner) == 0:
        raise NothingToRank("no comparisons yet: judgments of at least two systems are needed")
    loaded = time.perf_counter()
    ranking = rank_systems(
        data.comparisons,
        len(data.system_ids),
        protocol=run.protocol,
        runs=run.runs,
        seed=run.seed,
        progress=progress_writer(run),
    )
    computed = time.perf_counter()
    store_results(run, data, ranking, loaded - started, computed - loaded)


def progress_writer(run: RankingRun):
    def write(done: int, total: int) -> None:
        RankingRun.objects.filter(pk=run.pk).update(progress=done)

    return write


@transaction.atomic
def store_results(run, data: RankingInput, ranking, load_seconds, compute_seconds) -> None:
    SystemResult.objects.bulk_create(
        SystemResult(
            run=run,
            system_id=data.system_ids[index],
            position=position,
            cluster=int(ranking.cluster[index]),
            mu=float(ranking.mean_mu[index]),
            sigma=float(ranking.mean_sigma[index]),
            mu_std=float(ranking.std_mu[index]),
            rank_lo=int(ranking.rank_lo[index]),
            rank_hi=int(ranking.rank_hi[index]),
            comparisons=int(ranking.n_comparisons[index]),
        )
        for position, index in enumerate(ranking.order, start=1)
    )
    RankingRun.objects.filter(pk=run.pk).update(
        status=RankingRun.Status.DONE,
        progress=run.runs,
        finished_at=timezone.now(),
        judgments=data.judgments,
        hits=data.hits,
        comparisons=len(data.comparisons.winner),
        load_seconds=load_seconds,
        compute_seconds=compute_seconds,
        error="",
    )
