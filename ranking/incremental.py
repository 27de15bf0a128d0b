"""Views kept fresh by adding up what changed, rather than reading every judgment again.

Bradley-Terry ranks the comparisons counted per pair outcome, and best-worst scaling of
scores each system's times best, times worst and judgments (ranking/engine: both engines
rank from those counts, bradley_terry_of_outcomes and best_worst_of_counts). Those are sums
over the counted judgments, kept per criterion and view in a ViewState with what they
cover. A criterion's `judgments_rewrites` moves with every change to its judgments but a
submission (annotation.models.CampaignCriterion), and a submission's judgments get larger
ids than any committed before them (written under the criterion's row lock). So while the
rewrites are still those the sums were made under, the counted judgments are the ones
summed and those with a larger id: a run reads those only, adds them, and ranks from the
sums. Otherwise (no sums yet, or a rewrite since) it sums every counted judgment: the full
recomputation, whose ranking tests compare with the shared read's (service.load_version).

The views whose statistics are not sums are left to the shared read: WMT's and WebNLG's
z-scores move with each annotator's mean and deviation, so one judgment changes every
z-score of its annotator; TrueSkill's runs go over every comparison in order; best-worst
of choices averages per item (a sum per system and item, not done here). So is a criterion
asked on another criterion's page (DA's further ones): its judgments are written under the
other criterion's lock, and their ids need not grow in the order they commit.
"""

import logging
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Case, Value, When

from annotation.models import Assignment, CampaignCriterion, Judgment, System, counted_q
from jobs.claims import Heartbeat
from ranking.agreement.models import RunAgreement
from ranking.agreement.service import CHUNK_ROWS, MeasuredBefore, store_agreement
from ranking.engine.best_worst import best_worst_of_counts, best_worst_values
from ranking.engine.bradley_terry import PairOutcomes, bradley_terry_of_outcomes
from ranking.engine.protocols import threads
from ranking.protocols import REGISTERED, protocol_named

from .models import RankingRun, SystemResult, ViewState
from .service import AnyRanking, NothingToRank, ResultRow, input_of, progress_writer, stored_fields

log = logging.getLogger(__name__)

SUMMED = [protocol.name for protocol in REGISTERED if protocol.summed]

# A submitted judgment as the sums read it: JUDGMENT_ROW's fields (`hit` is the
# assignment, as there) with its id, its place in the ranking order and its HIT's policy.
SUMMED_FIELDS = {
    "id": "i8",
    "hit_id": "i8",
    "hit": "i8",
    "position": "i8",
    "annotator": "i8",
    "item": "i8",
    "system": "i8",
    "score": "f8",
    "counted": "?",
    "composition": "U10",
}
SUMMED_ROW = np.dtype(list(SUMMED_FIELDS.items()))


@dataclass
class Sums:
    """What the summed views rank, by the database's system ids. `first_seen` is each
    system's first counted judgment in ranking order (HIT, assignment, position): the
    engines number systems in that order (service.ranking_input_from_rows), so the sums are
    ranked under the numbering the shared read gives."""

    first_seen: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    pairs: Counter = field(default_factory=Counter)  # (winner, loser, draw) -> comparisons
    best: Counter = field(default_factory=Counter)  # best-worst of scores, per system
    worst: Counter = field(default_factory=Counter)
    judged: Counter = field(default_factory=Counter)
    judgments: int = 0  # counted
    hits: int = 0  # counted assignments
    comparisons: int = 0
    used: Counter = field(default_factory=Counter)  # per system: counted judgments
    left_out: Counter = field(default_factory=Counter)  # submitted, not counted
    compositions: Counter = field(default_factory=Counter)  # counted assignments per policy

    def add(self, rows: np.ndarray, criterion: CampaignCriterion) -> None:
        """Add submitted judgments of the criterion (SUMMED_ROW in ranking order, none of
        them added before, each assignment's together)."""
        self.used.update(rows["system"][rows["counted"]].tolist())
        self.left_out.update(rows["system"][~rows["counted"]].tolist())
        counted = rows[rows["counted"]]
        if len(counted) == 0:
            return
        self.note_first_seen(counted)
        starts = np.flatnonzero(np.r_[True, counted["hit"][1:] != counted["hit"][:-1]])
        self.compositions.update(counted["composition"][starts].tolist())
        data = input_of(criterion, counted)
        self.judgments += data.judgments
        self.hits += data.hits
        self.comparisons += len(data.comparisons)
        ids = np.asarray(data.systems, dtype=np.int64)
        self.add_pairs(ids, data.comparisons)
        if not criterion.judging.chooses:
            values = best_worst_values(data.scores)
            system = ids[data.scores.system]
            self.judged.update(system.tolist())
            self.best.update(system[values == 1].tolist())
            self.worst.update(system[values == -1].tolist())

    def note_first_seen(self, counted: np.ndarray) -> None:
        systems, first = np.unique(counted["system"], return_index=True)
        for system, row in zip(systems.tolist(), first.tolist(), strict=True):
            hit_id, assignment, position = (counted[name][row] for name in FIRST_SEEN)
            seen = (int(hit_id), int(assignment), int(position))
            known = self.first_seen.get(system)
            self.first_seen[system] = seen if known is None else min(known, seen)

    def add_pairs(self, ids: np.ndarray, comparisons) -> None:
        winner, loser = ids[comparisons.winner], ids[comparisons.loser]
        draw = comparisons.draw
        first = np.where(draw, np.minimum(winner, loser), winner)
        second = np.where(draw, np.maximum(winner, loser), loser)
        cells = np.stack([first, second, draw.astype(np.int64)], axis=1)
        keys, count = np.unique(cells, axis=0, return_counts=True)
        for (a, b, drawn), n in zip(keys.tolist(), count.tolist(), strict=True):
            self.pairs[a, b, bool(drawn)] += n

    def systems(self) -> list[int]:
        """The system ids in the shared read's numbering."""
        return sorted(self.first_seen, key=self.first_seen.__getitem__)

    def to_json(self) -> dict:
        return {
            "first_seen": [[s, *seen] for s, seen in self.first_seen.items()],
            "pairs": [[a, b, d, n] for (a, b, d), n in self.pairs.items()],
            **{name: list(getattr(self, name).items()) for name in COUNTERS},
            **{name: getattr(self, name) for name in TOTALS},
        }

    @classmethod
    def from_json(cls, stored: dict) -> "Sums":
        sums = cls(
            first_seen={s: (h, a, p) for s, h, a, p in stored["first_seen"]},
            pairs=Counter({(a, b, bool(d)): n for a, b, d, n in stored["pairs"]}),
            **{name: stored[name] for name in TOTALS},
        )
        for name in COUNTERS:
            setattr(sums, name, Counter(dict(stored[name])))
        return sums


FIRST_SEEN = ("hit_id", "hit", "position")  # the ranking order's keys (`hit`: assignment)
COUNTERS = ("best", "worst", "judged", "used", "left_out", "compositions")
TOTALS = ("judgments", "hits", "comparisons")


# Reading and keeping the sums ------------------------------------------------------------


def is_summed(criterion: CampaignCriterion, protocol: str) -> bool:
    """Whether this view of the criterion is kept by adding up (see the module's doc)."""
    if not settings.RANKING_INCREMENTAL or not protocol_named(protocol).summed:
        return False
    if not criterion.judging.has_own_hits(criterion):
        return False
    return protocol != "bws" or not criterion.judging.chooses


def judgments_after(criterion: CampaignCriterion, after_id: int) -> np.ndarray:
    """The criterion's submitted judgments of outputs with an id above `after_id`, as
    SUMMED_ROW in ranking order, marked with whether rankings count them."""
    counted = Case(When(counted_q("assignment__"), then=Value(True)), default=Value(False))
    rows = (
        Judgment.objects.for_criterion(criterion)
        .of_originals()
        .filter(assignment__status=Assignment.Status.SUBMITTED, id__gt=after_id)
        .annotate(is_counted=counted)
        .in_ranking_order()
        .values_list(
            "id",
            "assignment__hit_id",
            "assignment_id",
            "slot__position",
            "assignment__annotator_id",
            "assignment__hit__item_id",
            "slot__output__system_id",
            "score",
            "is_counted",
            "assignment__hit__composition",
        )
    )
    return np.fromiter(rows.iterator(chunk_size=CHUNK_ROWS), dtype=SUMMED_ROW)


@dataclass(frozen=True)
class UpToDate:
    sums: Sums
    version: int  # the criterion's judgments version read before the judgments
    rows_read: int
    from_scratch: bool


def up_to_date_sums(criterion: CampaignCriterion, protocol: str) -> UpToDate:
    """The view's sums as of now: the kept ones plus the judgments added since, or, after
    a rewrite (or with none kept), every judgment's; kept for the next run unless another
    worker moved them meanwhile. `criterion` read before: its version and rewrites."""
    state = ViewState.objects.filter(criterion=criterion, protocol=protocol).first()
    if state is not None and state.rewrites == criterion.judgments_rewrites:
        rows = judgments_after(criterion, state.covers_judgment_id)
        if not rewritten_since(criterion):
            sums = Sums.from_json(state.statistics)
            sums.add(rows, criterion)
            covers = max(state.covers_judgment_id, int(rows["id"].max(initial=0)))
            if len(rows):
                keep(state, criterion, protocol, sums, covers)
            return UpToDate(sums, criterion.judgments_version, len(rows), from_scratch=False)
        # A rewrite committed before the read: what was read may lack summed judgments.
        criterion = CampaignCriterion.objects.get(pk=criterion.pk)
    rows = judgments_after(criterion, 0)
    sums = Sums()
    sums.add(rows, criterion)
    keep(state, criterion, protocol, sums, int(rows["id"].max(initial=0)))
    return UpToDate(sums, criterion.judgments_version, len(rows), from_scratch=True)


def rewritten_since(criterion: CampaignCriterion) -> bool:
    now = CampaignCriterion.objects.filter(pk=criterion.pk).values_list("judgments_rewrites")
    return now.get()[0] != criterion.judgments_rewrites


def keep(
    state: ViewState | None,
    criterion: CampaignCriterion,
    protocol: str,
    sums: Sums,
    covers: int,
) -> None:
    """Store the sums in place of `state` (as read), only if no other worker replaced it
    since (compare-and-set): two workers never add the same judgments twice, and a worker
    that dies before this leaves the sums it started from."""
    fields = dict(
        covers_version=criterion.judgments_version,
        covers_judgment_id=covers,
        rewrites=criterion.judgments_rewrites,
        statistics=sums.to_json(),
    )
    if state is None:
        try:
            with transaction.atomic():
                ViewState.objects.create(criterion=criterion, protocol=protocol, **fields)
        except IntegrityError:
            pass  # another worker's sums came first; they serve as well
        return
    as_read = ViewState.objects.filter(
        pk=state.pk, covers_judgment_id=state.covers_judgment_id, rewrites=state.rewrites
    )
    as_read.update(**fields)


# Ranking from the sums ---------------------------------------------------------------------


def rank_sums(sums: Sums, protocol: str, repetitions: int, seed: int, progress=None):
    """The view's ranking of the sums (of two systems or more, compared), by their number
    in sums.systems()."""
    systems = sums.systems()
    if protocol == "bt":
        number = {system: n for n, system in enumerate(systems)}
        cells = list(sums.pairs.items())
        outcomes = PairOutcomes.of_counts(
            np.array([number[a] for (a, _, _), _ in cells], dtype=np.int64),
            np.array([number[b] for (_, b, _), _ in cells], dtype=np.int64),
            np.array([d for (_, _, d), _ in cells], dtype=bool),
            np.array([n for _, n in cells], dtype=np.int64),
            len(systems),
        )
        return bradley_terry_of_outcomes(outcomes, len(systems), repetitions, seed, progress)
    best, worst, judged = (
        np.array([counter[s] for s in systems], dtype=np.int64)
        for counter in (sums.best, sums.worst, sums.judged)
    )
    if progress is not None:
        progress(repetitions, repetitions)  # nothing resampled
    return best_worst_of_counts(best, worst, judged)


def rank_and_store_summed(run: RankingRun, token: str, heartbeat: Heartbeat) -> bool:
    """Rank a summed view from its sums brought up to date, and store it as the shared
    read's path does; False where the view is not summed, or has nothing to rank yet (the
    shared read's path then ranks it, or says why not)."""
    started = time.perf_counter()
    criterion = CampaignCriterion.objects.get(pk=run.criterion_id)
    if not is_summed(criterion, run.protocol):
        return False
    fresh = up_to_date_sums(criterion, run.protocol)
    sums = fresh.sums
    if len(sums.first_seen) < 2 or sums.comparisons == 0:
        return False
    log.info(
        "ranking run %s: %s judgments read%s",
        run.pk,
        fresh.rows_read,
        " (sums started again)" if fresh.from_scratch else "",
    )
    run.update_as_holder(
        token,
        judgments=sums.judgments,
        hits=sums.hits,
        comparisons=sums.comparisons,
        judgments_version=fresh.version,
        judgments_per_system=judgments_per_system(sums),
        hits_per_composition=dict(sums.compositions),
    )
    read = time.perf_counter()
    progress = progress_writer(run, token, heartbeat)
    with threads(settings.RANKING_PROCESSES):
        ranking = rank_sums(sums, run.protocol, run.repetitions, run.seed, progress)
    why = protocol_named(run.protocol).nothing_to_rank(ranking)
    if why:
        raise NothingToRank(why)
    computed = time.perf_counter()
    seconds = (read - started, computed - read)
    store_summed_results(run, token, fresh.version, sums.systems(), ranking, seconds)
    return True


def judgments_per_system(sums: Sums) -> dict[str, tuple[int, int]]:
    """As Judgment.objects.submitted_per_system() counts them, from the sums."""
    systems = set(sums.used) | set(sums.left_out)
    names = dict(System.objects.filter(pk__in=systems).values_list("pk", "name"))
    return {names[system]: (sums.used[system], sums.left_out[system]) for system in systems}


@transaction.atomic
def store_summed_results(
    run: RankingRun,
    token: str,
    version: int,
    systems: list[int],
    ranking: AnyRanking,
    seconds: tuple[float, float],
) -> None:
    """service.store_results of a ranking of sums. The agreement between annotators needs
    every judgment: stored with the run where another run of this version measured it
    already (copied), else left to the views that read them all."""
    view = protocol_named(run.protocol)
    run.finish_as_holder(
        token,
        RankingRun.Status.DONE,
        progress=run.repetitions,
        load_seconds=seconds[0],
        compute_seconds=seconds[1],
        error="",
        note=view.note(ranking),
    )
    rows = (
        ResultRow(position=position, system=systems[index], **view.result_fields(ranking, index))
        for position, index in enumerate(ranking.order, start=1)
    )
    SystemResult.objects.bulk_create(SystemResult(run=run, **stored_fields(row)) for row in rows)
    measured = measured_before(run.criterion_id, version, run.seed)
    if measured is not None:
        store_agreement(run, measured)


def share_agreement(run: RankingRun, version: int) -> None:
    """Once `run` (of the shared read) stored the agreement of this version: a copy for the
    summed runs of the version ranked before it, which had none to copy."""
    without = RankingRun.objects.filter(
        criterion_id=run.criterion_id,
        judgments_version=version,
        seed=run.seed,
        status=RankingRun.Status.DONE,
        agreement__isnull=True,
    ).exclude(pk=run.pk)
    for summed in without.filter(protocol__in=SUMMED):
        store_agreement(summed, MeasuredBefore(run.pk))


def measured_before(criterion_id: int, version: int, seed: int) -> MeasuredBefore | None:
    """The agreement a finished run of this version measured (measure_once's look-up)."""
    before = RunAgreement.objects.filter(
        run__criterion_id=criterion_id,
        run__judgments_version=version,
        run__seed=seed,
        run__status=RankingRun.Status.DONE,
    )
    earlier = before.order_by("-run_id").values_list("run_id", flat=True).first()
    return None if earlier is None else MeasuredBefore(earlier)
