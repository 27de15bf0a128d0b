"""Between the database and the ranking engine: load judgments as arrays, store results.

Systems are numbered in order of first appearance in the judgments (HIT by HIT, position by
position), because the E2E protocol breaks ties in sigma by that order.
"""

import logging
import time
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from datetime import timedelta
from typing import Any, Generic, TypeVar

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from annotation.handout.composition import reset_estimates, reset_estimates_from
from annotation.judging import form_of
from annotation.models import Assignment, CampaignCriterion, Judgment
from jobs.claims import Heartbeat, send_now, work_as_holder
from ranking.agreement.service import (
    CHUNK_ROWS,
    JUDGMENT_ROW,
    Measured,
    MeasuredBefore,
    judgments_of,
    measure_once,
    store_agreement,
    submitted_judgments,
)
from ranking.engine import Comparisons, Judgments, comparisons_from_hits
from ranking.engine.agreement import Judgments as AgreementJudgments
from ranking.engine.choices import NONE, Choices, comparisons_from_choices
from ranking.engine.forecast import stable_since
from ranking.engine.judgments import JudgeScores
from ranking.engine.progress import Progress
from ranking.engine.trueskill_runs import gpu, threads
from ranking.judge_scores import FusedJudge, fused_judge_of
from ranking.permutation_check import NullCheck, null_check
from ranking.protocols import DEFAULT, NAMES, STABILITY_PROTOCOL, protocol_named
from ranking.protocols.fused import NO_JUDGE

from .models import DEFAULT_REPETITIONS, NOTHING_TO_RANK, RankingRun, SystemResult

log = logging.getLogger(__name__)


NOT_CHECKED = NullCheck(0, 0)  # the platform's own views: no permutation check


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
    mean_raw: float | None = None
    effective_judgments: float | None = None
    humans_ci_lo: float | None = None
    humans_ci_hi: float | None = None


# One submitted assignment's judgments: (system index, score) per slot, in slot order.
Scores = list[tuple[int, float]]


def load_ranking_input(criterion: CampaignCriterion) -> RankingInput[int]:
    """The counted judgments of a criterion, in one query read as a stream. The annotator
    is a column of the assignment, which the query joins anyway for the HIT's order."""
    columns = ("assignment_id", "assignment__annotator_id", "slot__output__system_id", "score")
    rows = Judgment.objects.counted().for_criterion(criterion).in_ranking_order()
    read = rows.values_list(*columns, "assignment__hit__item_id").iterator(chunk_size=10_000)
    if form_of(criterion).chooses:
        return choices_input_from_rows(read)
    return ranking_input_from_rows(read)


def ranking_input_from_rows(
    rows: Iterable[tuple],
) -> RankingInput[SystemKey]:
    """The engine's input from counted judgments as (assignment, annotator, system, score)
    rows, or (assignment, annotator, system, score, item) rows, in ranking order
    (Judgment.objects.in_ranking_order()). The database and a bundle both come through
    here, so the same rows give the same input: systems, annotators and items are numbered
    by first appearance, whatever their keys. With the items, the views that average per
    item (WebNLG's) can."""
    assignments: dict[Hashable, Scores] = {}
    annotators: list[int] = []  # of each assignment, in the order of `assignments`
    items: list[int] = []  # likewise, where the rows carry them
    annotator_index: dict[Hashable, int] = {}
    item_index: dict[Hashable, int] = {}
    system_index: dict[SystemKey, int] = {}
    for assignment, annotator, system, score, *item in rows:
        index = system_index.setdefault(system, len(system_index))
        if assignment not in assignments:
            assignments[assignment] = []
            annotators.append(annotator_index.setdefault(annotator, len(annotator_index)))
            if item:
                items.append(item_index.setdefault(item[0], len(item_index)))
        assignments[assignment].append((index, score))
    systems, scores = hit_arrays(list(assignments.values()))
    per_hit_items = np.array(items, dtype=np.int64) if len(items) == len(annotators) else None
    return RankingInput(
        systems=list(system_index),
        comparisons=comparisons_from_hits(systems, scores, units=per_hit_items),
        scores=Judgments.from_hits(
            systems, scores, np.array(annotators, dtype=np.int64), per_hit_items
        ),
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
    return request_rankings(criterion, [protocol], repetitions, seed)[0]


def request_rankings(
    criterion: CampaignCriterion,
    protocols: list[str],
    repetitions: int = DEFAULT_REPETITIONS,
    seed: int = 0,
) -> list[RankingRun]:
    """A queued run per protocol (or the one already waiting, as request_ranking), in the
    order given, and one message for the new ones: the worker that takes the first computes
    the others after it from the same read of the judgments (execute_queued_runs)."""
    computation = dict(
        campaign_id=criterion.campaign_id, criterion=criterion, repetitions=repetitions, seed=seed
    )
    runs, new = [], []
    with transaction.atomic():
        # Two requests at once: the criterion's row serialises them (SQLite's writers are
        # serialised by its IMMEDIATE transactions).
        CampaignCriterion.objects.select_for_update(of=("self",)).filter(pk=criterion.pk).first()
        for protocol in protocols:
            waiting = RankingRun.objects.filter(
                **computation, protocol=protocol, status=RankingRun.Status.QUEUED
            )
            run = waiting.order_by("queued_at", "pk").first()
            if run is None:
                run = RankingRun.objects.create(**computation, protocol=protocol)
                new.append(run.pk)
            runs.append(run)
        if new:
            transaction.on_commit(lambda: send_together(new))
    return runs


def send_together(pks: list[int]) -> None:
    """One message for the runs `pks` (the first's); the others count as sent with it, so
    the sweep sends them again only if they wait longer than JOB_RESEND_SECONDS."""
    if send_now(RankingRun, pks[0]):
        queued = RankingRun.objects.filter(pk__in=pks[1:], status=RankingRun.Status.QUEUED)
        queued.update(sent_at=timezone.now())


def queue_due_rankings() -> list[RankingRun]:
    """The sweep: a run per protocol that fits its judgment form for every criterion whose
    judgments changed since the input of its latest run, unless one is waiting or one was
    queued less than the debounce interval ago, so a burst of submitted HITs leads to few
    recomputations. A
    criterion's runs go out as one message: one worker reads the judgments once for all."""
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
            if criterion is None:
                continue
            # The calibrated verdict first, the views that recompute every TrueSkill run
            # last, so the others are fresh sooner.
            due = sorted(due_protocols(criterion), key=queue_order)
            if due:
                queued += request_rankings(criterion, due)
    return queued


def queue_order(protocol: str) -> tuple[bool, bool]:
    view = protocol_named(protocol)
    return view.heavy, view.name != DEFAULT


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

    due = [protocol for protocol in fitting_the_form(criterion) if is_due(protocol)]
    return judged_only_with_a_judge(criterion, due)


def fitting_protocols(criterion: CampaignCriterion) -> list[str]:
    """The registered protocols that fit the criterion's judgment form (its `protocols`),
    in the registry's order; a view that ranks a judge's scores only where the criterion
    has a fused judge."""
    return judged_only_with_a_judge(criterion, fitting_the_form(criterion))


def fitting_the_form(criterion: CampaignCriterion) -> list[str]:
    fits = set(form_of(criterion).protocols)
    return [protocol for protocol in NAMES if protocol in fits]


def judged_only_with_a_judge(criterion: CampaignCriterion, names: list[str]) -> list[str]:
    """`names` less the views that rank a judge's scores where the criterion has no fused
    judge (asked only when such a view is among them)."""
    judged = [name for name in names if protocol_named(name).uses_judge]
    if judged and fused_judge_of(criterion) is None:
        return [name for name in names if name not in judged]
    return names


def request_judged_rankings(criterion: CampaignCriterion) -> list[RankingRun]:
    """The runs of the views that rank the fused judge's scores, requested when those
    scores may have changed (a judge job finished, the fused switch flipped) though the
    judgments did not: the judges app calls this. None where the newest finished run of
    such a view ranked these very scores (RankingRun.judge_version), or no judge is fused."""
    judge = fused_judge_of(criterion)
    if judge is None:
        return []
    stale = []
    for name in fitting_the_form(criterion):
        if protocol_named(name).uses_judge:
            newest = RankingRun.objects.for_criterion(criterion, name).latest_done()
            if newest is None or newest.judge_version != judge.version:
                stale.append(name)
    return request_rankings(criterion, stale) if stale else []


# Running ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedVersion:
    """A criterion's judgments as of one judgments version, with the counts a run stores
    beside its results: read once for every run of that version, the agreement between
    annotators and the hand-out's estimate."""

    criterion_id: int
    version: int
    data: RankingInput[int]
    agreement_judgments: AgreementJudgments  # every submitted judgment, counted or not
    judgments_per_system: dict[str, tuple[int, int]]
    hits_per_composition: dict[str, int]


class SharedRead:
    """The last version a worker read, for the runs it computes in turn: a run whose
    criterion is still at that version ranks it without reading the judgments again (the
    version changes with anything that changes what counts). Held for one batch of runs
    only, so a worker keeps no campaign in memory between them."""

    def __init__(self) -> None:
        self.loaded: LoadedVersion | None = None
        self.ranked = False  # a run stored a ranking

    def of(self, criterion: CampaignCriterion) -> LoadedVersion:
        loaded = self.loaded
        if (
            loaded is None
            or loaded.criterion_id != criterion.pk
            or loaded.version != criterion.judgments_version
        ):
            self.loaded = None  # free the previous input before reading the next
            loaded = self.loaded = load_version(criterion)
        return loaded


def load_version(criterion: CampaignCriterion) -> LoadedVersion:
    """Read after the criterion (with its version): the input covers at least that one.
    One stream of the submitted judgments in ranking order, into an array: the counted ones
    make the ranking's input, all of them the agreement's."""
    rows = submitted_judgments(criterion).in_ranking_order()
    every = np.fromiter(rows.iterator(chunk_size=CHUNK_ROWS), dtype=JUDGMENT_ROW)
    return LoadedVersion(
        criterion_id=criterion.pk,
        version=criterion.judgments_version,
        data=input_of(criterion, every[every["counted"]]),
        agreement_judgments=judgments_of(every),
        judgments_per_system=Judgment.objects.for_criterion(criterion).submitted_per_system(),
        hits_per_composition=hits_per_composition(criterion),
    )


def input_of(criterion: CampaignCriterion, counted: np.ndarray) -> RankingInput[int]:
    """The ranking's input from the counted judgments (JUDGMENT_ROW, ranking order): the
    choices of a form that chooses (pairwise, best-worst), as load_ranking_input reads them,
    or the scores."""
    if not form_of(criterion).chooses:
        return ranking_input_from_array(counted)
    fields = ("hit", "annotator", "system", "score", "item")
    columns = (counted[field].tolist() for field in fields)
    return choices_input_from_rows(zip(*columns, strict=True))


def ranking_input_from_array(rows: np.ndarray) -> RankingInput[int]:
    """ranking_input_from_rows of the database's counted judgments as an array of
    JUDGMENT_ROW in ranking order (an assignment's rows together), with numpy rather than a
    loop per row: the same input, numbered by first appearance."""
    if len(rows) == 0:
        return ranking_input_from_rows([])
    systems, system = numbered_by_first_appearance(rows["system"])
    starts = np.flatnonzero(np.r_[True, rows["hit"][1:] != rows["hit"][:-1]])
    sizes = np.diff(np.r_[starts, len(rows)])
    hit = np.repeat(np.arange(len(starts)), sizes)
    column = np.arange(len(rows)) - np.repeat(starts, sizes)
    hit_systems = np.full((len(starts), sizes.max()), -1, dtype=np.int32)
    hit_scores = np.full(hit_systems.shape, np.nan)
    hit_systems[hit, column] = system
    hit_scores[hit, column] = rows["score"]
    _, annotators = numbered_by_first_appearance(rows["annotator"][starts])
    _, items = numbered_by_first_appearance(rows["item"][starts])
    scores = Judgments.from_hits(hit_systems, hit_scores, annotators, items)
    if "output" in (rows.dtype.names or ()):  # the shared read's rows; a bundle's have none
        # from_hits keeps the scored slots in row order: the judged outputs, for the fused view.
        scores = replace(scores, output=rows["output"][~np.isnan(rows["score"])])
    return RankingInput(
        systems=systems.tolist(),
        comparisons=comparisons_from_hits(hit_systems, hit_scores, units=items),
        scores=scores,
        judgments=len(rows),
        hits=len(starts),
    )


def numbered_by_first_appearance(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys in order of first appearance, and each key's number among them."""
    distinct, first = np.unique(keys, return_index=True)
    order = np.argsort(first, kind="stable")
    number = np.empty(len(distinct), dtype=np.int64)
    number[order] = np.arange(len(distinct))
    return distinct[order], number[np.searchsorted(distinct, keys)]


def replay_rows(data: RankingInput[int]) -> Iterator[tuple[int, int, float]]:
    """The counted judgments as the hand-out's estimate replays them, from the ranking's
    input: (HIT, system id, score) in ranking order, as the database gives them. Plain
    columns zipped, so the estimate reads them without calling back into this module."""
    scores = data.scores
    assert scores.hit is not None  # from_hits numbers the HITs
    system_ids = np.asarray(data.systems, dtype=np.int64)[scores.system]
    columns = (scores.hit.tolist(), system_ids.tolist(), scores.score.tolist())
    return zip(*columns, strict=True)


def execute_run(run: RankingRun) -> bool:
    """Compute a run and store its results; False if another worker has it or took it."""
    shared = SharedRead()
    done = execute_run_sharing(run, shared)
    after_ranking(run, shared)
    return done


def execute_run_sharing(run: RankingRun, shared: SharedRead) -> bool:
    token = run.claim(progress=0)
    if token is None:
        return False
    return work_as_holder(
        run,
        token,
        lambda heartbeat: compute_and_store(run, token, heartbeat, shared),
        expected=(NothingToRank,),
    )


def after_ranking(run: RankingRun, shared: SharedRead) -> None:
    """Once the runs of a read have stored a ranking: the hand-out's online estimate,
    recomputed from every counted judgment of that read; skipped (for the next run) if a
    submission changed them since."""
    loaded = shared.loaded
    if shared.ranked and loaded is not None:
        criterion = CampaignCriterion.objects.filter(pk=loaded.criterion_id).first()
        if criterion is None:
            return
        if loaded.data.scores.hit is None:
            # Choices (pairwise, best-worst) carry no HIT of each score: the estimate reads
            # the judgments itself.
            reset_estimates(criterion)
        else:
            reset_estimates_from(criterion, loaded.version, replay_rows(loaded.data))


def compute_and_store(
    run: RankingRun, token: str, heartbeat: Heartbeat, shared: SharedRead
) -> None:
    """Rank and store; a criterion with nothing to rank yet (no comparisons, or no z-scores
    for WMT's view) is a state of the campaign, not a fault: the run ends done, with no
    results and the reason as its note, logged at INFO."""
    try:
        rank_and_store(run, token, heartbeat, shared)
    except NothingToRank as nothing:
        log.info("ranking run %s: %s", run.pk, nothing)
        run.finish_as_holder(
            token, RankingRun.Status.DONE, progress=run.repetitions, error="", note=str(nothing)
        )


def rank_and_store(run: RankingRun, token: str, heartbeat: Heartbeat, shared: SharedRead) -> None:
    started = time.perf_counter()
    # Read before the judgments (with its version): the run then covers at least that one.
    criterion = CampaignCriterion.objects.get(pk=run.criterion_id)
    loaded = shared.of(criterion)
    data = loaded.data
    if protocol_named(run.protocol).uses_judge:
        data = with_judge_scores(run, token, data, fused_judge_of(criterion))
    run.update_as_holder(
        token,
        judgments=data.judgments,
        hits=data.hits,
        comparisons=len(data.comparisons.winner),
        judgments_version=criterion.judgments_version,
        judgments_per_system=loaded.judgments_per_system,
        hits_per_composition=loaded.hits_per_composition,
    )
    read = time.perf_counter()
    with threads(settings.RANKING_PROCESSES), gpu(settings.RANKING_GPU):
        ranking = rank_input(
            data,
            run.protocol,
            run.repetitions,
            run.seed,
            progress=progress_writer(run, token, heartbeat),
        )
    check = published_check(run, data, heartbeat)
    computed = time.perf_counter()
    # Agreement between the annotators, stored with the run so pages read it, not compute it;
    # once per version of the judgments, whichever protocol's run comes first.
    agreement = measure_once(criterion, run.seed, loaded.agreement_judgments)
    store_results(run, token, data, ranking, read - started, computed - read, agreement, check)
    if run.protocol == STABILITY_PROTOCOL:
        note_cluster_stability(criterion, run, data.hits)
    shared.ranked = True


def published_check(run: RankingRun, data: RankingInput[int], heartbeat: Heartbeat) -> NullCheck:
    """For a published procedure, how often it orders identical systems on this campaign's
    design (ranking/permutation_check.py); nothing for the platform's own views."""
    view = protocol_named(run.protocol)
    if not view.published:
        return NOT_CHECKED

    def rows_of(permuted: RankingInput[int], seed: int) -> list:
        try:
            return result_rows(
                permuted, rank_input(permuted, run.protocol, run.repetitions, seed), run.protocol
            )
        except NothingToRank:
            return []

    with threads(settings.RANKING_PROCESSES):
        return null_check(
            data,
            rows_of,
            settings.RANKING_NULL_CHECK_PERMUTATIONS,
            settings.RANKING_NULL_CHECK_SECONDS,
            run.seed,
            progress=lambda done, most: heartbeat.check(),
        )


def with_judge_scores(
    run: RankingRun, token: str, data: RankingInput[int], judge: FusedJudge | None
) -> RankingInput[int]:
    """`data` with the fused judge's scores of the outputs of its systems, whose version
    the run records (a judge's new scores are then due a run though the judgments are the
    same: request_judged_rankings)."""
    if judge is None:
        raise NothingToRank(NO_JUDGE)
    run.update_as_holder(token, judge_version=judge.version)
    outputs, systems, scores = judge.read_scores()
    number = {system: i for i, system in enumerate(data.systems)}
    system = np.array([number.get(s, -1) for s in systems.tolist()], dtype=np.int64)
    ranked = system >= 0  # outputs of systems nobody judged tell the fused view nothing
    judged = JudgeScores(outputs[ranked], system[ranked], scores[ranked], judge.name)
    return replace(data, scores=replace(data.scores, judge=judged))


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
    own_hits = form_of(criterion).has_own_hits(criterion)
    counted = Assignment.objects.counted().judging(criterion, own_hits)
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
    view = protocol_named(protocol)
    compares = len(data.comparisons.winner) > 0 or (not view.needs_comparisons and lone(data))
    if len(data.systems) < 2 or not compares:
        # Said so that a campaign whose judgments were all left out is not read as empty.
        raise NothingToRank(
            "no comparisons yet; a ranking needs judgments of at least two systems that count"
            " (in HITs not flagged, by annotators not excluded)"
        )
    ranking = view.rank(
        data.comparisons, len(data.systems), data.scores, repetitions, seed, progress
    )
    why = view.nothing_to_rank(ranking)
    if why:
        raise NothingToRank(why)
    return ranking


def lone(data: RankingInput) -> bool:
    """Whether the input has scores to rank without comparisons: pages of one output each
    (a direct assessment or error-span page of one), which compare nothing on the page."""
    return len(data.scores) > 0 and data.scores.choices is None


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
    check: NullCheck = NOT_CHECKED,
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
        pairs=pair_claims(data, ranking),
        null_permutations=check.permutations,
        null_ordered=check.ordered,
    )
    rows = result_rows(data, ranking, run.protocol)
    SystemResult.objects.bulk_create(SystemResult(run=run, **stored_fields(row)) for row in rows)
    store_agreement(run, agreement)


def pair_claims(data: RankingInput, ranking: AnyRanking) -> dict:
    """What a view whose claims hold for the whole table says of every two systems, as
    RankingRun.pairs stores it; {} for the others."""
    pairs = getattr(ranking, "pairs", None)
    if pairs is None:
        return {}
    critical = pairs.claims.critical
    return {
        "critical": critical if np.isfinite(critical) else None,
        "rows": pairs.rows(data.systems),
    }


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
