"""Automatic metrics on the results page: the section's context, the button that queues a
metric run, and the CSV download. Pages read stored results; a worker computes them."""

from dataclasses import dataclass

from django import forms
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Campaign
from annotation.permissions import campaign_permission_required
from jobs.durations import human_duration, rough_time_left
from ranking.models import RankingRun

from .charts import Scatter, scatter_chart
from .export import write_correlations_csv, write_metrics_csv
from .models import (
    NUMBER_METRICS,
    SENTENCE_BLEU_METRICS,
    SLOT_METRICS,
    WORD_OVERLAP_METRICS,
    Metric,
    MetricRun,
)
from .service import (
    MetricCorrelation,
    MetricTable,
    correlations,
    latest_metric_run,
    latest_rankings,
    metric_table,
    request_metrics,
)


class MetricsRequestForm(forms.Form):
    # The results page to come back to.
    criterion = forms.CharField(max_length=40, required=False)

    def __init__(self, *args, campaign: Campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.campaign = campaign

    def clean_criterion(self) -> str:
        name = self.cleaned_data["criterion"]
        if name and not self.campaign.criteria.filter(name=name).exists():
            raise forms.ValidationError(f"The campaign has no criterion {name!r}.")
        return name


@dataclass
class CorrelationView:
    found: MetricCorrelation
    chart: Scatter | None


@dataclass
class MetricsRow:
    system: str
    cluster: int | None
    mu: float | None
    values: list[float | None]


@dataclass(frozen=True)
class MetricGroup:
    """A table of the section: metrics that belong together, how they are shown, and the
    metric that orders the systems before the criterion has a ranking."""

    title: str
    metrics: tuple[str, ...]
    note: str
    digits: int = 4
    times: float = 1.0  # shown multiplied (LogicNLG's BLEU as its paper prints them)
    order_by: str = ""
    higher_better: bool = True
    # A whole count in the first column (RotoWire's numbers checked).
    count_first: bool = False


# Every metric a run can store belongs to one group; one that does not (a metric added
# later) is still shown, under OTHER_METRICS, so no computed metric stays off the page.
GROUPS = (
    MetricGroup(
        "Word overlap with the references",
        tuple(str(m) for m in WORD_OVERLAP_METRICS),
        "BLEU, NIST (mteval-v13a), METEOR 1.5, ROUGE-L and CIDEr as the E2E challenge computed"
        " them; chrF from sacrebleu. Normalised average: the mean of BLEU, NIST/10, METEOR,"
        " ROUGE-L and CIDEr/10 (E2E Table 8).",
        order_by=Metric.NORMALISED_AVERAGE,
    ),
    MetricGroup(
        "BLEU-1/2/3 of statements about tables (LogicNLG)",
        tuple(str(m) for m in SENTENCE_BLEU_METRICS),
        "As LogicNLG's evaluate.py computes them (Chen et al. 2020, Table 2): each statement"
        " against every reference statement of its table, nltk's sentence BLEU, averaged"
        " over the statements; times 100, as the paper prints them.",
        digits=2,
        times=100.0,
        order_by=Metric.BLEU3,
    ),
    MetricGroup(
        "Slot errors (E2E MRs, pattern matching)",
        tuple(str(m) for m in SLOT_METRICS),
        "Shares of each system's outputs: with every slot of the MR realised and none added,"
        " with a slot added, with a slot missing, with a slot given another value; SER ="
        " (missing + wrong + added) / slots.",
        digits=3,
        order_by=Metric.SER,
        higher_better=False,
    ),
    MetricGroup(
        "Numbers in the box score (RotoWire, a relation check)",
        tuple(str(m) for m in NUMBER_METRICS),
        "Each number of a summary is attached to the nearest player or team named before it"
        " in its sentence; the share is of those numbers that are in that player's or team's"
        " row of the box or line score, in any statistic. A screening measure: a number that"
        " belongs to another entity than the nearest counts as unsupported.",
        digits=3,
        order_by=Metric.NUMBERS_SUPPORTED,
        count_first=True,
    ),
)
OTHER_METRICS = "Other metrics"


@dataclass
class GroupTable:
    group: MetricGroup
    columns: list[tuple[str, str]]
    rows: list[MetricsRow]
    # What orders the rows: the ranking's score, or before one exists the group's metric.
    ordered_by: str


@dataclass
class MetricsSection:
    run: MetricRun | None
    pending: MetricRun | None
    last_failed: MetricRun | None
    tables: list[GroupTable]
    correlations: list[CorrelationView]
    ranked: bool  # whether the criterion has a ranking the rows follow
    time_left: str = ""  # of the pending run, once it has scored a system
    compute_time: str = ""  # of the run shown


def time_left(run: MetricRun | None) -> str:
    """'about 3 min left' at the pace measured since the first systems were scored;
    'measuring the pace' until a system after them is, '' before any."""
    if run is None or run.first_scored_at is None:
        return ""
    seconds = run.seconds_left(timezone.now())
    if seconds is None:
        return "measuring the pace"
    return f"{rough_time_left(seconds)} left"


def _label(metric: str) -> str:
    return Metric(metric).label if metric in Metric.values else metric


def group_tables(table: MetricTable, ranking: RankingRun | None) -> list[GroupTable]:
    """A table per group that has a value in the run, then one of any metric no group
    holds; rows in the ranking's order where there is one, else by the group's metric."""
    grouped = {metric for group in GROUPS for metric in group.metrics}
    others = tuple(m for m in table.metrics if m not in grouped)
    groups = [*GROUPS, MetricGroup(OTHER_METRICS, others, "")] if others else list(GROUPS)
    placed = {}
    if ranking is not None:
        placed = {r.system.name: r for r in ranking.results.select_related("system")}
    tables = []
    for group in groups:
        columns = [(m, _label(m)) for m in group.metrics if m in table.metrics]
        if columns:
            rows, ordered_by = _rows(table, group, columns, placed)
            tables.append(GroupTable(group, columns, rows, ordered_by))
    return tables


def _times(value: float | None, times: float) -> float | None:
    return None if value is None else value * times


def _rows(table: MetricTable, group: MetricGroup, columns, placed) -> tuple[list, str]:
    wanted = [metric for metric, _ in columns]
    rows = [
        MetricsRow(
            row.system,
            placed[row.system].cluster if row.system in placed else None,
            placed[row.system].mu if row.system in placed else None,
            [_times(row.get(metric), group.times) for metric in wanted],
        )
        for row in table.rows
        if any(row.get(metric) is not None for metric in wanted)
    ]
    if placed:
        rows.sort(key=lambda r: (r.mu is None, -(r.mu or 0.0)))
        return rows, ""
    order = group.order_by if group.order_by in wanted else ""
    if order:
        index, sign = wanted.index(order), -1 if group.higher_better else 1
        rows.sort(key=lambda r: (r.values[index] is None, sign * (r.values[index] or 0.0)))
    return rows, _label(order) if order else ""


def metrics_section(campaign: Campaign, ranking: RankingRun | None) -> MetricsSection:
    runs = MetricRun.objects.filter(campaign=campaign)
    run = latest_metric_run(campaign)
    failed = runs.filter(status=MetricRun.Status.FAILED).first()
    if failed and run and failed.queued_at < run.queued_at:
        failed = None
    pending = runs.pending().first()
    section = MetricsSection(run, pending, failed, [], [], ranking is not None, time_left(pending))
    if run is None:
        return section
    table = metric_table(run)
    section.compute_time = human_duration(run.compute_seconds)
    section.tables = group_tables(table, ranking)
    if ranking is not None:
        section.correlations = [
            CorrelationView(found, scatter_chart(found.points))
            for found in correlations(table, ranking)
        ]
    return section


@campaign_permission_required("change")
@require_POST
def compute(request, slug: str):
    campaign = get_object_or_404(Campaign, slug=slug)
    form = MetricsRequestForm(request.POST, campaign=campaign)
    if not form.is_valid():
        return HttpResponse(f"Invalid request: {form.errors.as_text()}", status=400)
    with transaction.atomic():
        request_metrics(campaign)
    criterion = form.cleaned_data["criterion"]
    if criterion:
        return redirect(reverse("ranking:results", args=[slug, criterion]) + "#metrics")
    return redirect("ranking:campaign", slug)


def _finished_table(slug: str) -> tuple[Campaign, MetricTable]:
    campaign = get_object_or_404(Campaign, slug=slug)
    run = get_object_or_404(MetricRun.objects.filter(campaign=campaign).finished()[:1])
    return campaign, metric_table(run)


def _csv_response(name: str) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@campaign_permission_required("view")
@require_GET
def metrics_csv(request, slug: str):
    _, table = _finished_table(slug)
    response = _csv_response(f"{slug}-metrics.csv")
    write_metrics_csv(response, table)
    return response


@campaign_permission_required("view")
@require_GET
def correlations_csv(request, slug: str):
    campaign, table = _finished_table(slug)
    response = _csv_response(f"{slug}-metric-correlations.csv")
    write_correlations_csv(response, table, latest_rankings(campaign))
    return response
