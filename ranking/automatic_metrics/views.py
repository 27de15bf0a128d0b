"""Automatic metrics on the results page: the section's context, the button that queues a
metric run, and the CSV download. Pages read stored results; a worker computes them."""

from dataclasses import dataclass, field

from django import forms
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Campaign
from annotation.permissions import campaign_permission_required
from ranking.models import RankingRun

from .charts import Scatter, scatter_chart
from .export import write_correlations_csv, write_metrics_csv
from .models import NUMBER_METRICS, SLOT_METRICS, WORD_OVERLAP_METRICS, Metric, MetricRun
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


@dataclass
class MetricsSection:
    run: MetricRun | None
    pending: MetricRun | None
    last_failed: MetricRun | None
    overlap_columns: list[tuple[str, str]]
    slot_columns: list[tuple[str, str]]
    overlap_rows: list[MetricsRow]
    slot_rows: list[MetricsRow]
    correlations: list[CorrelationView]
    time_left: str = ""  # of the pending run, once it has scored a system
    number_columns: list[tuple[str, str]] = field(default_factory=list)
    number_rows: list[MetricsRow] = field(default_factory=list)


def time_left(run: MetricRun | None) -> str:
    """'about 3 min left' at the pace of the systems scored so far; '' before the first."""
    seconds = None if run is None else run.seconds_left(timezone.now())
    if seconds is None:
        return ""
    if seconds >= 90:
        return f"about {round(seconds / 60)} min left"
    return f"about {max(5, round(seconds / 5) * 5)} s left"


def _columns(table: MetricTable, wanted) -> list[tuple[str, str]]:
    return [(str(m), Metric(m).label) for m in wanted if str(m) in table.metrics]


def _rows(table: MetricTable, columns, ranking: RankingRun | None) -> list[MetricsRow]:
    """Systems in the ranking's order (best mu first), then those it lacks."""
    placed = {}
    if ranking is not None:
        for result in ranking.results.select_related("system"):
            placed[result.system.name] = result
    rows = [
        MetricsRow(
            row.system,
            placed[row.system].cluster if row.system in placed else None,
            placed[row.system].mu if row.system in placed else None,
            [row.get(metric) for metric, _ in columns],
        )
        for row in table.rows
        if any(row.get(metric) is not None for metric, _ in columns)
    ]
    rows.sort(key=lambda r: (r.mu is None, -(r.mu or 0.0)))
    return rows


def metrics_section(campaign: Campaign, ranking: RankingRun | None) -> MetricsSection:
    runs = MetricRun.objects.filter(campaign=campaign)
    run = latest_metric_run(campaign)
    failed = runs.filter(status=MetricRun.Status.FAILED).first()
    if failed and run and failed.queued_at < run.queued_at:
        failed = None
    pending = runs.pending().first()
    section = MetricsSection(run, pending, failed, [], [], [], [], [], time_left(pending))
    if run is None:
        return section
    table = metric_table(run)
    section.overlap_columns = _columns(table, WORD_OVERLAP_METRICS)
    section.slot_columns = _columns(table, SLOT_METRICS)
    section.overlap_rows = _rows(table, section.overlap_columns, ranking)
    section.slot_rows = _rows(table, section.slot_columns, ranking)
    section.number_columns = _columns(table, NUMBER_METRICS)
    section.number_rows = _rows(table, section.number_columns, ranking)
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
