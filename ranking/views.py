from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.db.models import Avg, F
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.attention import attention_summary
from annotation.models import Campaign, CampaignCriterion, Composition
from annotation.permissions import campaign_permission_required
from ranking.agreement.models import RunAgreement
from ranking.automatic_metrics.views import metrics_section

from .charts import interval_chart, judgment_chart, rank_chart, width_chart
from .engine.forecast import PairForecast, forecast
from .error_spans import error_rate_rows
from .export import write_csv
from .forms import ProtocolForm, RecomputeForm
from .judge_scores import fused_judge_of
from .models import NOTHING_TO_RANK, RankingRun, SystemResult
from .protocols import CHOICES, STABILITY_PROTOCOL, protocol_named
from .service import fitting_protocols, request_ranking


def _table_context(protocol: str, run: RankingRun | None) -> dict:
    """The run's table and charts as its protocol presents them."""
    rows = list(run.results.select_related("system")) if run else []
    shown = protocol_named(protocol).presentation
    scored = sum(row.comparisons for row in rows)  # WMT's count: judgments with a z-score
    return {
        "rows": rows,
        "summary": shown.summary,
        "table_template": shown.table_template,
        "score_label": shown.score_label,
        "chart": rank_chart(rows, shown.rank_chart_title) if rows else None,
        "interval_chart": (
            interval_chart(rows, shown.interval_chart_title)
            if rows and shown.interval_chart_title
            else None
        ),
        "judgments_scored": scored,
        "judgments_left_out": run.judgments - scored if run else 0,
    }


@dataclass(frozen=True)
class ForecastRow:
    upper: str
    lower: str
    pair: PairForecast


def _forecast_context(run: RankingRun | None, rows: list) -> dict:
    """The forecast (ranking/engine/forecast.py) from the run's own table: its scores,
    their spread over the runs (the fused view: their standard errors) and its clusters.
    WMT's view has no spread: no forecast."""
    if run is None or len(rows) < 2 or any(row.mu_std is None for row in rows):
        return {"forecast": None}
    predicted = forecast(
        np.array([row.mu for row in rows]),
        np.array([row.mu_std for row in rows]),
        np.array([row.cluster for row in rows]),
        run.hits,
    )
    return {
        "forecast": predicted,
        "forecast_rows": [
            ForecastRow(str(rows[p.upper].system), str(rows[p.lower].system), p)
            for p in predicted.pairs
        ],
    }


def _composition_context(run: RankingRun | None) -> dict:
    counts = run.hits_per_composition if run else {}
    labels = {**dict(Composition.choices), "": "Imported, or composed before policies existed"}
    total = sum(counts.values())
    return {
        "composed": [
            (labels.get(policy, policy), n, 100 * n / total)
            for policy, n in sorted(counts.items(), key=lambda pair: -pair[1])
        ],
        "composed_total": total,
    }


def _criterion_or_404(slug: str, criterion_name: str) -> CampaignCriterion:
    return get_object_or_404(
        CampaignCriterion.objects.select_related("campaign"),
        campaign__slug=slug,
        name=criterion_name,
    )


@campaign_permission_required("view")
@require_GET
def results(request, slug: str, criterion_name: str):
    criterion = _criterion_or_404(slug, criterion_name)
    fitting = fitting_protocols(criterion)
    protocol = ProtocolForm(request.GET).chosen()
    runs = RankingRun.objects.for_criterion(criterion, protocol)
    run = runs.latest_done()
    pending = runs.pending().first()
    counted = RankingRun.objects.latest_judgment_counts(criterion)
    judgments = (
        {name: tuple(n) for name, n in counted.judgments_per_system.items()} if counted else {}
    )
    context = {
        "judgment_chart": judgment_chart(judgments) if judgments else None,
        "judgments_counted": counted,
        "criterion": criterion,
        "campaign": criterion.campaign,
        "protocol": protocol,
        "run": run,
        **_table_context(protocol, run),
        "pending": pending,
        "abandoned": None if pending else runs.abandoned().first(),
        # The views that fit the criterion's judgment form (its sweep ranks only those).
        "protocols": [(name, label) for name, label in CHOICES if name in fitting],
        "form": RecomputeForm(initial={"protocol": protocol}, protocols=fitting),
        "last_failed": runs.filter(status=RankingRun.Status.FAILED)
        .exclude(error__startswith=NOTHING_TO_RANK)
        .first(),
        "nothing_to_rank": runs.nothing_to_rank_now(),
        "metrics": metrics_section(criterion.campaign, run),
        "agreement": RunAgreement.objects.filter(run=run).first() if run else None,
        "attention": attention_summary(criterion.campaign),
        # Errors per 100 words by severity, for a form whose judgments carry error spans.
        "error_rates": error_rate_rows(criterion),
        **_composition_context(run),
    }
    context.update(_forecast_context(run, context["rows"]))
    if run is not None and protocol_named(protocol).uses_judge:
        context["width_chart"] = _width_chart(criterion, protocol)
        context["fused_judge"] = fused_judge_of(criterion)
    context["stability"] = _stability(criterion, protocol, run)
    return render(request, "ranking/results.html", context)


def _width_chart(criterion: CampaignCriterion, protocol: str):
    """The mean width of the fused and the humans-only intervals over the criterion's
    finished runs of the fused view, by the judgments each counted; None below two runs."""
    runs = RankingRun.objects.for_criterion(criterion, protocol).finished()
    widths = (
        SystemResult.objects.filter(run__in=runs.values("pk"))
        .values("run_id", "run__judgments")
        .annotate(
            width=Avg(F("ci_hi") - F("ci_lo")),
            humans_width=Avg(F("humans_ci_hi") - F("humans_ci_lo")),
        )
        .order_by("run__judgments", "run_id")
    )
    points = [
        (row["run__judgments"], row["width"], row["humans_width"])
        for row in widths
        if row["width"] is not None and row["humans_width"] is not None
    ]
    return width_chart(points) if len(points) >= 2 else None


def _stability(criterion: CampaignCriterion, protocol: str, run: RankingRun | None):
    """Since when the E2E clusters have stayed the same (ranking.service's
    note_cluster_stability), for the E2E view of a criterion that has compared two runs."""
    since = criterion.clusters_stable_since
    if protocol != STABILITY_PROTOCOL or run is None or not since or run.hits < since:
        return None
    closed = not criterion.is_open and criterion.closed_as_stable_since == since
    return {"since": since, "stable_for": run.hits - since, "closed": closed}


@campaign_permission_required("change")
@require_POST
def recompute(request, slug: str, criterion_name: str):
    criterion = _criterion_or_404(slug, criterion_name)
    form = RecomputeForm(request.POST, protocols=fitting_protocols(criterion))
    if not form.is_valid():
        return HttpResponse(f"Invalid request: {form.errors.as_text()}", status=400)
    with transaction.atomic():
        request_ranking(criterion, **form.cleaned_data)
    url = reverse("ranking:results", args=[slug, criterion_name])
    return redirect(f"{url}?protocol={form.cleaned_data['protocol']}")


@campaign_permission_required("view")
@require_GET
def results_csv(request, slug: str, criterion_name: str):
    criterion = _criterion_or_404(slug, criterion_name)
    protocol = ProtocolForm(request.GET).chosen()
    runs = RankingRun.objects.for_criterion(criterion, protocol)
    run = runs.latest_done()
    nothing = runs.nothing_to_rank_now()
    if nothing is not None:  # as the page says: no table, so no CSV of an older one
        raise Http404(nothing.nothing_to_rank_reason)
    if run is None:
        raise Http404("No finished ranking run for this criterion and protocol.")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    filename = f"{slug}-{criterion_name}-{protocol}-ranking.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    write_csv(response, run)
    return response


@campaign_permission_required("view")
@require_GET
def campaign_results(request, slug: str):
    campaign = get_object_or_404(Campaign, slug=slug)
    first = campaign.criteria.order_by("name").first()
    if first is None:
        return redirect("admin:annotation_campaign_change", campaign.pk)
    return redirect("ranking:results", slug, first.name)
