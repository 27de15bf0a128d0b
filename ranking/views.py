import itertools
import math
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Avg, F
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.attention import attention_summary
from annotation.judging import form_of
from annotation.models import Campaign, CampaignCriterion, Composition
from annotation.permissions import campaign_permission_required
from ranking.agreement.models import RunAgreement
from ranking.automatic_metrics.views import metrics_section

from .charts import interval_chart, judgment_chart, rank_chart, width_chart
from .claims import claimed_pairs
from .engine.forecast import PairForecast, claims_forecast
from .error_spans import error_rate_rows
from .export import write_csv
from .forms import ProtocolForm, RecomputeForm
from .judge_scores import fused_judge_of
from .models import NOTHING_TO_RANK, RankingRun, SystemResult
from .permutation_check import wilson
from .protocols import CHOICES, DEFAULT, STABILITY_PROTOCOL, protocol_named
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
            if rows and shown.interval_chart_title and all(row.ci_lo is not None for row in rows)
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


def _forecast_context(criterion: CampaignCriterion) -> dict:
    """The forecast (ranking/engine/forecast.py) from the calibrated verdict's latest run,
    whichever tab is shown: its neighbours in order, each pair's |t| and whether it is
    claimed, against the critical |t| its claims need."""
    run = RankingRun.objects.for_criterion(criterion, DEFAULT).latest_done()
    if run is None or not run.pairs.get("rows") or run.pairs.get("critical") is None:
        return {"forecast": None}
    rows = list(run.results.select_related("system"))
    if len(rows) < 2:
        return {"forecast": None}
    by_pair = pair_rows(run)
    neighbours = [
        by_pair[(upper.system_id, lower.system_id)] for upper, lower in itertools.pairwise(rows)
    ]
    predicted = claims_forecast(
        [(abs(row.t), row.claimed_above) for row in neighbours], run.pairs["critical"], run.hits
    )
    return {
        "forecast": predicted,
        "forecast_run": run,
        "forecast_rows": [
            ForecastRow(str(rows[p.upper].system), str(rows[p.lower].system), p)
            for p in predicted.pairs
        ],
    }


@dataclass(frozen=True)
class PairRow:
    """A stored pair of RankingRun.pairs, seen from `above` (t and the difference positive
    where `above` is ahead)."""

    above: int
    below: int
    difference: float
    se: float
    t: float
    claimed_above: bool  # `above` claimed better than `below`
    claimed_below: bool


def pair_rows(run: RankingRun) -> dict[tuple[int, int], PairRow]:
    """Every stored pair of the run, both ways round."""
    pairs = {}
    for a, b, difference, se, stored_t, claimed in run.pairs.get("rows", []):
        # None: a difference the data fix exactly (joint.finite_or_none)
        t = math.copysign(math.inf, difference) if stored_t is None else stored_t
        pairs[(a, b)] = PairRow(a, b, difference, se, t, claimed > 0, claimed < 0)
        pairs[(b, a)] = PairRow(b, a, -difference, se, -t, claimed < 0, claimed > 0)
    return pairs


def _power_context(run: RankingRun | None) -> dict:
    """What a view whose claims hold jointly could separate now: the pairs claimed and
    still open, and the smallest difference it would claim for a typical pair (the first
    step's critical |t| times the pairs' median standard error)."""
    if run is None or not run.pairs.get("rows"):
        return {"power": None}
    rows = run.pairs["rows"]
    claimed = sum(1 for row in rows if row[5] != 0)
    critical = run.pairs.get("critical")
    errors = sorted(row[3] for row in rows if row[3] > 0)
    smallest = critical * errors[len(errors) // 2] if critical and errors else None
    return {
        "power": {
            "pairs": len(rows),
            "claimed": claimed,
            "open": len(rows) - claimed,
            "smallest": smallest,
            "critical": critical,
        }
    }


def _published_context(criterion: CampaignCriterion, protocol: str, run: RankingRun | None) -> dict:
    """For a published procedure: how often it ordered identical systems on this design,
    and the pairs it orders that the calibrated verdict does not (and the other way)."""
    view = protocol_named(protocol)
    if not view.published or run is None:
        return {"published": view.published}
    verdict = RankingRun.objects.for_criterion(criterion, DEFAULT).latest_done()
    rows = list(run.results.select_related("system"))
    names = {row.system_id: str(row.system) for row in rows}
    # claimed_pairs gives the rows' `system`: here the System objects themselves.
    ordered = {(above.pk, below.pk) for above, below in claimed_pairs(rows)}  # type: ignore[attr-defined]
    verdict_pairs = set()
    if verdict is not None:
        verdict_pairs = {
            (row.above, row.below) for row in pair_rows(verdict).values() if row.claimed_above
        }

    def named(pairs):
        return sorted(f"{names.get(a, a)} › {names.get(b, b)}" for a, b in pairs)

    low, high = wilson(run.null_ordered, run.null_permutations)
    return {
        "published": view.published,
        "null_check": {
            "ordered": run.null_ordered,
            "permutations": run.null_permutations,
            "percent": round(100 * run.null_ordered / max(run.null_permutations, 1)),
            "low": round(100 * low),
            "high": round(100 * high),
        },
        "verdict_run": verdict,
        "only_published": named(ordered - verdict_pairs) if verdict else [],
        "only_verdict": named(verdict_pairs - ordered) if verdict else [],
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
        "resample_word": protocol_named(protocol).resample_word,
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
        "agreement_on": form_of(criterion).agreement_on,
        "attention": attention_summary(criterion.campaign),
        # Errors per 100 words by severity, for a form whose judgments carry error spans.
        "error_rates": error_rate_rows(criterion),
        **_composition_context(run),
    }
    context.update(_forecast_context(criterion))
    context.update(_power_context(run))
    context.update(_published_context(criterion, protocol, run))
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
