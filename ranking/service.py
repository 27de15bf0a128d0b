"""Between the database and the ranking engine: load judgments as arrays, store results.

Systems are numbered in order of first appearance in the judgments (HIT by HIT, position by
position), because the E2E protocol breaks ties in sigma by that order.
"""

import itertools
import logging
import time
from collections.abc import Hashable, Iterable
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any, Generic, TypeVar

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from annotation.handout.composition import reset_estimates
from annotation.models import Assignment, CampaignCriterion, CriterionScore, Judgment
from jobs.claims import Heartbeat, work_as_holder
from ranking.agreement.service import Measured, MeasuredBefore, measure_once, store_agreement
from ranking.engine import Comparisons, Judgments, comparisons_from_hits
from ranking.engine.choices import NONE, Choices, comparisons_from_choices
from ranking.engine.forecast import stable_since
from ranking.engine.protocols import Progress
from ranking.protocols import DEFAULT, NAMES, STABILITY_PROTOCOL, protocol_named

from .models import DEFAULT_REPETITIONS, NOTHING_TO_RANK, RankingRun, SystemResult

log = logging.getLogger(__name__)


class NothingToRank(ValueError):
    def __init__(self, why: str) -> None:
        super().__init__(NOTHING_TO_RANK + why)


SystemKey = TypeVar("SystemKey", bound=Hashable)
# What a protocol's engine returns (ranking.engine's Ranking, BradleyTerryRanking, ...).
AnyRanking = Any


@dataclass(frozen=True)
class RankingInput(Generic[SystemKey]):
    """What the engine ranks, and which system each of its numbers stands for: the
    database's system ids, or the system names of a bundle."""

    systems: list[SystemKey]
    comparisons: Comparisons
    scores: Judgments  # the raw scores with their annotators, for WMT's view
    judgments: int
    hits: int


@dataclass(frozen=True)
class ResultRow(Generic[SystemKey]):
    """One system's line of a ranking, in the protocol's order: what a SystemResult stores
    (what each field holds per protocol: SystemResult's docstring)."""

    position: int
    system: SystemKey
    cluster: int
    mu: float
    rank_lo: int
    rank_hi: int
    comparisons: int
    sigma: float | None = None
    mu_std: float | None = None
    ci_lo: float | None = None
    ci_hi: float | None = None
    wins: int | None = None
    losses: int | None = None


# One submitted assignment's judgments: (system index, score) per slot, in slot order.
Scores = list[tuple[int, float]]


def load_ranking_input(criterion: CampaignCriterion) -> RankingInput[int]:
    """The counted judgments of a criterion, in one query read as a stream. The annotator
    is a column of the assignment, which the query joins anyway for the HIT's order."""
    columns = ("assignment_id", "assignment__annotator_id", "slot__output__system_id", "score")
    rows = Judgment.objects.counted().for_criterion(criterion).in_ranking_order()
    if criterion.judging.chooses:
        chosen = rows.values_list(*columns, "assignment__hit__item_id")
        return choices_input_from_rows(chosen.iterator(chunk_size=10_000))
    read = rows.values_list(*columns).iterator(chunk_size=10_000)
    if criterion.judging.asks_further_criteria:
        # A criterion asked on another's page has its scores there (CriterionScore).
        further = CriterionScore.objects.counted().for_criterion(criterion).in_ranking_order()
        read = itertools.chain(read, further.values_list(*columns).iterator(chunk_size=10_000))
    return ranking_input_from_rows(read)


def ranking_input_from_rows(
    rows: Iterable[tuple[Hashable, Hashable, SystemKey, float]],
) -> RankingInput[SystemKey]:
    """The engine's input from counted judgments as (assignment, annotator, system, score)
    rows in ranking order (Judgment.objects.in_ranking_order()). The database and a bundle
    both come through here, so the same rows give the same input: systems and annotators
    are numbered by first appearance, whatever their keys."""
    assignments: dict[Hashable, Scores] = {}
    annotators: list[int] = []  # of each assignment, in the order of `assignments`
    annotator_index: dict[Hashable, int] = {}
    system_index: dict[SystemKey, int] = {}
    for assignment, annotator, system, score in rows:
        index = system_index.setdefault(system, len(system_index))
        if assignment not in assignments:
            assignments[assignment] = []
            annotators.append(annotator_index.setdefault(annotator, len(annotator_index)))
        assignments[assignment].append((index, score))
    systems, scores = hit_arrays(list(assignments.values()))
    return RankingInput(
        systems=list(system_index),
        comparisons=comparisons_from_hits(systems, scores),
        scores=Judgments.from_hits(systems, scores, np.array(annotators, dtype=np.int64)),
        judgments=sum(len(judged) for judged in assignments.values()),
        hits=len(assignments),
    )


def choices_input_from_rows(
    rows: Iterable[tuple[Hashable, Hashable, SystemKey, float, Hashable]],
) -> RankingInput[SystemKey]:
    """The engine's input from the counted judgments of a form that chooses
    (JudgmentForm.chooses) as (assignment, annotator, system, score, item) rows in ranking
    order: each assignment is one choice, its best the system scored 1, its worst the one
    scored 0, none of either where all are 0.5 (a tie). Its comparisons are those the
    choices imply (best > others > worst, nothing between the middle ones), and its scores
    carry the choices for the best-worst view. An assignment whose best or worst is not one
    system (identical outputs chosen) is kept, and left out by Choices.valid."""
    pages: dict[Hashable, list] = {}  # assignment -> [annotator, item, [(system, score)]]
    annotator_index: dict[Hashable, int] = {}
    item_index: dict[Hashable, int] = {}
    system_index: dict[SystemKey, int] = {}
    for assignment, annotator, system, score, item in rows:
        index = system_index.setdefault(system, len(system_index))
        if assignment not in pages:
            pages[assignment] = [
                annotator_index.setdefault(annotator, len(annotator_index)),
                item_index.setdefault(item, len(item_index)),
                [],
            ]
        pages[assignment][2].append((index, score))
    width = max((len(judged) for _, _, judged in pages.values()), default=2)
    shown = np.full((len(pages), width), NONE, dtype=np.int32)
    best = np.full(len(pages), NONE, dtype=np.int32)
    worst = np.full(len(pages), NONE, dtype=np.int32)
    for row, (_, _, judged) in enumerate(pages.values()):
        shown[row, : len(judged)] = [index for index, _ in judged]
        tops = [index for index, score in judged if score == 1.0]
        bottoms = [index for index, score in judged if score == 0.0]
        # Two systems of one sentence chosen best (or worst): no single one, so not valid.
        best[row] = tops[0] if len(tops) == 1 else (NONE if not tops else -2)
        worst[row] = bottoms[0] if len(bottoms) == 1 else (NONE if not bottoms else -2)
    choices = Choices(
        judgment=np.arange(len(pages)),
        item=np.array([item for _, item, _ in pages.values()], dtype=np.int64),
        annotator=np.array([annotator for annotator, _, _ in pages.values()], dtype=np.int64),
        shown=shown,
        best=best,
        worst=worst,
    )
    return RankingInput(
        systems=list(system_index),
        comparisons=comparisons_from_choices(choices),
        scores=Judgments.of_choices(choices),
        judgments=sum(len(judged) for _, _, judged in pages.values()),
        hits=len(pages),
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


# Queueing -----------------------------------------------------------------------------------


def request_ranking(
    criterion: CampaignCriterion,
    protocol: str = DEFAULT,
    repetitions: int = DEFAULT_REPETITIONS,
    seed: int = 0,
) -> RankingRun:
    """A queued run of this computation, sent to a worker once this transaction commits;
    one already queued is returned instead of a second: it has not read the judgments yet,
    so it covers the newest of them (three clicks of "recompute" make one run)."""
    computation = dict(
        campaign_id=criterion.campaign_id,
        criterion=criterion,
        protocol=protocol,
        repetitions=repetitions,
        seed=seed,
    )
    with transaction.atomic():
        # Two requests at once: the criterion's row serialises them (SQLite's writers are
        # serialised by its IMMEDIATE transactions).
        CampaignCriterion.objects.select_for_update(of=("self",)).filter(pk=criterion.pk).first()
        waiting = RankingRun.objects.filter(**computation, status=RankingRun.Status.QUEUED)
        run = waiting.order_by("queued_at", "pk").first()
        if run is None:
            run = RankingRun.objects.create(**computation)
            run.send_to_worker()
    return run


def queue_due_rankings() -> list[RankingRun]:
    """The sweep: a run per protocol that fits its judgment form for every criterion whose
    judgments changed since the input of its latest run, unless one is waiting or one was
    queued less than the debounce interval ago, so a burst of submitted HITs leads to few
    recomputations."""
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
                    request_ranking(criterion, protocol) for protocol in due_protocols(criterion)
                ]
    return queued


def due_protocols(criterion: CampaignCriterion) -> list[str]:
    """The protocols whose ranking of the criterion is due: its judgments are newer than
    any run's input, no run is waiting, none was queued within the debounce interval.

    Two queries whatever the number of protocols, since the sweep asks this of every
    judged criterion on every beat."""
    runs = RankingRun.objects.for_criterion(criterion)
    latest = {
        protocol: (covered, last_queued)
        for protocol, covered, last_queued in runs.order_by()
        .values("protocol")
        .annotate(covered=Max("judgments_version"), last_queued=Max("queued_at"))
        .values_list("protocol", "covered", "last_queued")
    }
    waiting = set(runs.pending().values_list("protocol", flat=True))
    debounce = timezone.now() - timedelta(seconds=settings.RANKING_DEBOUNCE_SECONDS)

    def is_due(protocol: str) -> bool:
        if protocol in waiting:
            return False
        if protocol not in latest:
            return True
        covered, last_queued = latest[protocol]
        return criterion.judgments_version > covered and last_queued <= debounce

    return [protocol for protocol in fitting_protocols(criterion) if is_due(protocol)]


def fitting_protocols(criterion: CampaignCriterion) -> list[str]:
    """The registered protocols that fit the criterion's judgment form (its `protocols`),
    in the registry's order."""
    fits = set(criterion.judging.protocols)
    return [protocol for protocol in NAMES if protocol in fits]


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
    """Rank and store; a criterion with nothing to rank yet (no comparisons, or no z-scores
    for WMT's view) is a state of the campaign, not a fault: the run ends done, with no
    results and the reason as its note, logged at INFO."""
    try:
        rank_and_store(run, token, heartbeat)
    except NothingToRank as nothing:
        log.info("ranking run %s: %s", run.pk, nothing)
        run.finish_as_holder(
            token, RankingRun.Status.DONE, progress=run.repetitions, error="", note=str(nothing)
        )


def rank_and_store(run: RankingRun, token: str, heartbeat: Heartbeat) -> None:
    started = time.perf_counter()
    # Read before the judgments (with its version): the run then covers at least that one.
    criterion = CampaignCriterion.objects.get(pk=run.criterion_id)
    data = load_ranking_input(criterion)
    run.update_as_holder(
        token,
        judgments=data.judgments,
        hits=data.hits,
        comparisons=len(data.comparisons.winner),
        judgments_version=criterion.judgments_version,
        judgments_per_system=Judgment.objects.for_criterion(criterion).submitted_per_system(),
        hits_per_composition=hits_per_composition(criterion),
    )
    loaded = time.perf_counter()
    ranking = rank_input(
        data,
        run.protocol,
        run.repetitions,
        run.seed,
        progress=progress_writer(run, token, heartbeat),
    )
    computed = time.perf_counter()
    # Agreement between the annotators, stored with the run so pages read it, not compute it;
    # once per version of the judgments, whichever protocol's run comes first.
    agreement = measure_once(criterion, run.seed)
    store_results(run, token, data, ranking, loaded - started, computed - loaded, agreement)
    if run.protocol == STABILITY_PROTOCOL:
        note_cluster_stability(criterion, run, data.hits)
    # The hand-out's online estimate, recomputed from every counted judgment; skipped (for
    # the next run) if a submission changed them meanwhile.
    reset_estimates(criterion)


def note_cluster_stability(criterion: CampaignCriterion, run: RankingRun, hits: int) -> None:
    """Record since how many counted HITs the E2E clusters have stayed as `run` (done, of
    `hits` counted HITs) has them, comparing it with the finished run before it; close the
    criterion to new HITs once that is `close_when_stable_for` HITs, unless it was already
    closed, and reopened, for these same clusters."""
    previous = (
        RankingRun.objects.for_criterion(criterion, run.protocol)
        .finished()
        .filter(hits__lt=hits)
        .order_by("-hits", "-id")
        .first()
    )
    same = previous is not None and clusters_of(previous) == clusters_of(run)
    previous_hits = previous.hits if previous is not None else 0
    since = stable_since(hits, same, previous_hits, criterion.clusters_stable_since)
    fields: dict[str, Any] = {"clusters_stable_since": since}
    limit = criterion.close_when_stable_for
    if limit and hits - since >= limit and criterion.closed_as_stable_since != since:
        fields.update(is_open=False, closed_as_stable_since=since)
    CampaignCriterion.objects.filter(pk=criterion.pk).update(**fields)


def clusters_of(run: RankingRun) -> dict[int, int]:
    return dict(run.results.values_list("system_id", "cluster"))


def hits_per_composition(criterion: CampaignCriterion) -> dict[str, int]:
    counted = Assignment.objects.counted().for_criterion(criterion)
    rows = counted.order_by().values_list("hit__composition").annotate(n=Count("id"))
    return dict(rows)


def rank_input(
    data: RankingInput,
    protocol: str,
    repetitions: int,
    seed: int,
    progress: Progress | None = None,
) -> AnyRanking:
    """Rank what `data` holds: a stored run and its re-ranking from a bundle both call this."""
    if len(data.systems) < 2 or len(data.comparisons.winner) == 0:
        # Said so that a campaign whose judgments were all left out is not read as empty.
        raise NothingToRank(
            "no comparisons yet: a ranking needs judgments of at least two systems that count"
            " (in HITs not flagged, by annotators not excluded)"
        )
    view = protocol_named(protocol)
    ranking = view.rank(
        data.comparisons, len(data.systems), data.scores, repetitions, seed, progress
    )
    why = view.nothing_to_rank(ranking)
    if why:
        raise NothingToRank(why)
    return ranking


def progress_writer(run: RankingRun, token: str, heartbeat: Heartbeat):
    def write(done: int, total: int) -> None:
        heartbeat.check()
        run.update_as_holder(token, progress=done)

    return write


@transaction.atomic
def store_results(
    run: RankingRun,
    token: str,
    data: RankingInput[int],
    ranking: AnyRanking,
    load_seconds: float,
    compute_seconds: float,
    agreement: Measured | MeasuredBefore,
) -> None:
    """Mark the run done and write its results, together, and only while this worker holds
    the claim: a late finisher whose run was taken over writes nothing."""
    view = protocol_named(run.protocol)
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
        note=view.note(ranking),
    )
    rows = result_rows(data, ranking, run.protocol)
    SystemResult.objects.bulk_create(SystemResult(run=run, **stored_fields(row)) for row in rows)
    store_agreement(run, agreement)


def result_rows(
    data: RankingInput[SystemKey], ranking: AnyRanking, protocol: str
) -> list[ResultRow[SystemKey]]:
    """The ranking's lines in its order, each system by its key in `data`."""
    fields = protocol_named(protocol).result_fields
    return [
        ResultRow(position=position, system=data.systems[index], **fields(ranking, index))
        for position, index in enumerate(ranking.order, start=1)
    ]


def stored_fields(row: ResultRow[int]) -> dict:
    fields = asdict(row)
    fields["system_id"] = fields.pop("system")
    return fields
