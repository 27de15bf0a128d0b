"""Between the database and ranking.metrics: load a campaign's outputs and references,
store per-system metric results, and pair stored metrics with stored TrueSkill mu for the
correlations (computed on reading: a few dozen numbers)."""

import time
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from annotation.models import Campaign, Item, Output
from jobs.claims import Heartbeat, work_as_holder
from ranking import metrics
from ranking.metrics import numbers, sentence_bleu
from ranking.models import RankingRun, SystemResult
from ranking.protocols import STABILITY_PROTOCOL

from .models import (
    NUMBER_METRICS,
    SENTENCE_BLEU_METRICS,
    SLOT_METRICS,
    WORD_OVERLAP_METRICS,
    Metric,
    MetricResult,
    MetricRun,
)

# Counts, not measures of quality: no correlation with the human ranking is shown for them.
NOT_CORRELATED = {Metric.NUMBERS_CHECKED}


class NothingToScore(ValueError):
    pass


@dataclass
class MetricInput:
    references: dict[int, list[str]] = field(default_factory=dict)  # item id -> references
    mrs: dict[int, list] = field(default_factory=dict)  # item id -> MR attributes (mr items)
    tables: set[int] = field(default_factory=set)  # ids of table items (LogicNLG's BLEU-n)
    games: dict[int, dict] = field(default_factory=dict)  # item id -> box score (boxscore items)
    outputs: dict[int, dict[int, str]] = field(default_factory=dict)  # system id -> item -> text

    @property
    def output_count(self) -> int:
        return sum(len(texts) for texts in self.outputs.values())


def load_metric_input(campaign: Campaign) -> MetricInput:
    data = MetricInput()
    items = Item.objects.filter(campaign=campaign).order_by("id")
    for item_id, kind, input_data, references in items.values_list(
        "id", "input_kind", "input_data", "references"
    ).iterator(chunk_size=2000):
        data.references[item_id] = [ref for ref in references or [] if ref.strip()]
        if kind == "mr":
            data.mrs[item_id] = input_data["attributes"]
        elif kind == "table":
            data.tables.add(item_id)
        elif kind == "boxscore":
            data.games[item_id] = input_data
    rows = Output.objects.filter(item__campaign=campaign).order_by("system_id", "item_id")
    for system_id, item_id, text in rows.values_list("system_id", "item_id", "text").iterator(
        chunk_size=5000
    ):
        data.outputs.setdefault(system_id, {})[item_id] = text
    return data


def table_bleu_results(data: MetricInput) -> dict[int, tuple[int, dict[Metric, float]]]:
    """system id -> (outputs scored, BLEU-1/2/3) over its outputs for table items, as
    LogicNLG's evaluate.py scores them."""
    references = {item: data.references[item] for item in data.tables}
    return {
        system: (count, {Metric(name): value for name, value in values.items()})
        for system, (count, values) in sentence_bleu.score_systems(references, data.outputs).items()
    }


def slot_results(data: MetricInput) -> dict[int, tuple[int, dict[Metric, float]]]:
    """system id -> (outputs checked, metric -> value) over its outputs for MR items."""
    results = {}
    for system_id, texts in data.outputs.items():
        pairs = [(data.mrs[item], text) for item, text in texts.items() if item in data.mrs]
        if not pairs:
            continue
        errors = metrics.slot_errors(pairs)
        results[system_id] = (
            errors.outputs,
            {
                Metric.ALL_REALISED: errors.share(errors.all_realised),
                Metric.ADDED: errors.share(errors.with_added),
                Metric.MISSING: errors.share(errors.with_missing),
                Metric.WRONG_VALUE: errors.share(errors.with_wrong),
                Metric.SER: errors.ser,
            },
        )
    return results


def number_results(data: MetricInput) -> dict[int, tuple[int, dict[Metric, float]]]:
    """system id -> (outputs checked, numbers checked and the share supported) over its
    outputs for box-score items (RotoWire's number check); a system whose outputs attach
    no number to any player or team has no share."""
    results = {}
    for system_id, texts in data.outputs.items():
        pairs = [(data.games[item], text) for item, text in texts.items() if item in data.games]
        if not pairs:
            continue
        found = numbers.number_support(pairs)
        values = {Metric.NUMBERS_CHECKED: float(found.checked)}
        if found.share is not None:
            values[Metric.NUMBERS_SUPPORTED] = found.share
        results[system_id] = (found.outputs, values)
    return results


# Queueing and running --------------------------------------------------------------------


def request_metrics(campaign: Campaign) -> MetricRun:
    """Create a queued run and send it to a worker once this transaction commits, or give
    back the campaign's run that is queued or running already: three clicks make one run,
    and metric runs cannot fill every worker slot."""
    with transaction.atomic():
        # The campaign's row is the lock on PostgreSQL, so two requests at once cannot both
        # find no run waiting; SQLite's transactions take the write lock at once (settings).
        Campaign.objects.select_for_update().filter(pk=campaign.pk).order_by("pk").first()
        waiting = MetricRun.objects.filter(campaign=campaign).unfinished().first()
        if waiting is not None:
            return waiting
        run = MetricRun.objects.create(campaign=campaign)
        run.send_to_worker()
        return run


def execute_metric_run(run: MetricRun) -> bool:
    """Compute a run and store its results; False if another worker has it or took it."""
    token = run.claim(progress=0, first_scored_at=None, first_scored=0)
    if token is None:
        return False
    return work_as_holder(
        run,
        token,
        lambda heartbeat: compute_and_store(run, token, heartbeat),
        expected=(NothingToScore,),
    )


def compute_and_store(run: MetricRun, token: str, heartbeat: Heartbeat) -> None:
    started = time.perf_counter()
    data = load_metric_input(run.campaign)
    if not data.outputs:
        raise NothingToScore("no outputs yet: import or generate some first")
    slots = slot_results(data)
    table_bleu = table_bleu_results(data)
    checked_numbers = number_results(data)
    heartbeat.check()
    run.update_as_holder(token, progress=0, progress_total=len(data.outputs))
    overlap = metrics.score_systems(
        data.references, data.outputs, progress=ProgressWriter(run, token, heartbeat)
    )
    seconds = time.perf_counter() - started
    store_results(run, token, data, overlap, slots, seconds, table_bleu, checked_numbers)


@dataclass
class ProgressWriter:
    """Stores the systems scored so far on the run as they move (a write per system), and
    stops the work once another worker holds the run."""

    run: MetricRun
    token: str
    heartbeat: Heartbeat
    written: int = 0

    def __call__(self, done: int, total: int) -> None:
        self.heartbeat.check()
        if done == self.written:
            return
        first: dict[str, object] = {}
        if not self.written:  # the first systems scored: the pace is measured from now
            first = {"first_scored_at": timezone.now(), "first_scored": done}
        self.run.update_as_holder(self.token, progress=done, progress_total=total, **first)
        self.written = done


@transaction.atomic
def store_results(
    run: MetricRun,
    token: str,
    data: MetricInput,
    overlap: metrics.WordOverlap[int],
    slots: dict[int, tuple[int, dict[Metric, float]]],
    seconds: float,
    table_bleu: dict[int, tuple[int, dict[Metric, float]]] | None = None,
    checked_numbers: dict[int, tuple[int, dict[Metric, float]]] | None = None,
) -> None:
    """Mark the run done and write its results together, only while holding the claim."""
    implementations = dict(overlap.implementations)
    if data.tables:
        implementations |= dict.fromkeys(SENTENCE_BLEU_METRICS, sentence_bleu.IMPLEMENTATION)
    if data.games:
        implementations |= dict.fromkeys(NUMBER_METRICS, numbers.IMPLEMENTATION)
    run.finish_as_holder(
        token,
        MetricRun.Status.DONE,
        systems=len(data.outputs),
        outputs=data.output_count,
        missing=overlap.missing,
        implementations=implementations,
        compute_seconds=seconds,
        error="",
    )
    rows = [
        MetricResult(
            run=run,
            system_id=system_id,
            metric=metric,
            value=value,
            outputs=overlap.scored[system_id],
        )
        for system_id, scores in overlap.scores.items()
        for metric, value in scores.items()
    ]
    rows += [
        MetricResult(run=run, system_id=system_id, metric=metric, value=value, outputs=count)
        for per_system in (slots, table_bleu or {}, checked_numbers or {})
        for system_id, (count, values) in per_system.items()
        for metric, value in values.items()
    ]
    MetricResult.objects.bulk_create(rows)


# Reading -------------------------------------------------------------------------------


@dataclass
class MetricTable:
    """A finished run's results for pages and CSV: one row per system."""

    run: MetricRun
    metrics: list[str]  # the metrics that have a value for some system, in display order
    rows: list["SystemMetrics"]

    def values(self, metric: str) -> dict[str, float]:
        return {row.system: row.values[metric] for row in self.rows if metric in row.values}


@dataclass
class SystemMetrics:
    system: str
    values: dict[str, float]
    outputs: dict[str, int]  # metric -> the system's outputs it scored

    def get(self, metric: str) -> float | None:
        return self.values.get(metric)


def latest_metric_run(campaign: Campaign) -> MetricRun | None:
    return MetricRun.objects.filter(campaign=campaign).finished().first()


def metric_table(run: MetricRun) -> MetricTable:
    by_system: dict[str, SystemMetrics] = {}
    for name, metric, value, outputs in run.results.values_list(
        "system__name", "metric", "value", "outputs"
    ):
        row = by_system.setdefault(name, SystemMetrics(name, {}, {}))
        row.values[metric] = value
        row.outputs[metric] = outputs
    present = {metric for row in by_system.values() for metric in row.values}
    known = WORD_OVERLAP_METRICS + SENTENCE_BLEU_METRICS + SLOT_METRICS + NUMBER_METRICS
    # Metrics of no list (stored by a later version, or by hand) follow, so none is hidden.
    order = [m for m in known if m in present] + sorted(present - set(known))
    rows = sorted(
        by_system.values(),
        key=lambda row: (-row.values.get(Metric.NORMALISED_AVERAGE, float("-inf")), row.system),
    )
    return MetricTable(run, [str(m) for m in order], rows)


def latest_rankings(
    campaign: Campaign, protocol: str = STABILITY_PROTOCOL
) -> dict[str, RankingRun]:
    """criterion -> its latest finished ranking run of `protocol`: by default the E2E
    protocol's, whose mu the results page shows first, so the CSV's correlations are
    the page's whichever protocol last finished."""
    latest: dict[str, RankingRun] = {}
    runs = RankingRun.objects.filter(campaign=campaign, protocol=protocol)
    runs = runs.select_related("criterion")
    for run in runs.finished():
        latest.setdefault(run.criterion.name, run)
    return dict(sorted(latest.items()))


@dataclass
class MetricCorrelation:
    metric: str
    label: str
    correlation: metrics.Correlation | None
    points: list[tuple[str, float, float]]  # (system, metric value, mu)


def correlations(table: MetricTable, ranking: RankingRun) -> list[MetricCorrelation]:
    """Each metric against the run's mu, over the systems that have both."""
    mu = dict(SystemResult.objects.filter(run=ranking).values_list("system__name", "mu"))
    found = []
    for metric in table.metrics:
        if metric in NOT_CORRELATED:
            continue
        values = table.values(metric)
        points = [(name, values[name], mu[name]) for name in sorted(values) if name in mu]
        found.append(
            MetricCorrelation(
                metric,
                Metric(metric).label if metric in Metric.values else metric,
                metrics.correlate([p[1] for p in points], [p[2] for p in points]),
                points,
            )
        )
    return found
