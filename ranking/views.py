from django.contrib.admin.views.decorators import staff_member_required
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Campaign, CampaignCriterion, Judgment

from .charts import judgment_chart, rank_chart
from .export import write_csv
from .forms import ProtocolForm, RecomputeForm
from .metric_views import metrics_section
from .models import Protocol, RankingRun, RunAgreement
from .service import request_ranking


def _criterion_or_404(slug: str, criterion_name: str) -> CampaignCriterion:
    return get_object_or_404(
        CampaignCriterion.objects.select_related("campaign"),
        campaign__slug=slug,
        criterion=criterion_name,
    )


@staff_member_required
@require_GET
def results(request, slug: str, criterion_name: str):
    criterion = _criterion_or_404(slug, criterion_name)
    protocol = ProtocolForm(request.GET).chosen()
    runs = RankingRun.objects.for_criterion(criterion, protocol)
    run = runs.latest_done()
    rows = list(run.results.select_related("system")) if run else []
    pending = runs.pending().first()
    judgments = Judgment.objects.for_criterion(criterion).submitted_per_system()
    context = {
        "judgment_chart": judgment_chart(judgments) if judgments else None,
        "criterion": criterion,
        "campaign": criterion.campaign,
        "protocol": protocol,
        "run": run,
        "rows": rows,
        "chart": rank_chart(rows) if rows else None,
        "pending": pending,
        "abandoned": None if pending else runs.abandoned().first(),
        "protocols": Protocol.choices,
        "form": RecomputeForm(initial={"protocol": protocol}),
        "last_failed": runs.filter(status=RankingRun.Status.FAILED).first(),
        "metrics": metrics_section(criterion.campaign, run),
        "agreement": RunAgreement.objects.filter(run=run).first() if run else None,
    }
    return render(request, "ranking/results.html", context)


@staff_member_required
@require_POST
def recompute(request, slug: str, criterion_name: str):
    criterion = _criterion_or_404(slug, criterion_name)
    form = RecomputeForm(request.POST)
    if not form.is_valid():
        return HttpResponse(f"Invalid request: {form.errors.as_text()}", status=400)
    with transaction.atomic():
        request_ranking(criterion.campaign, criterion.criterion, **form.cleaned_data)
    url = reverse("ranking:results", args=[slug, criterion_name])
    return redirect(f"{url}?protocol={form.cleaned_data['protocol']}")


@staff_member_required
@require_GET
def results_csv(request, slug: str, criterion_name: str):
    criterion = _criterion_or_404(slug, criterion_name)
    protocol = ProtocolForm(request.GET).chosen()
    run = RankingRun.objects.for_criterion(criterion, protocol).latest_done()
    if run is None:
        raise Http404("No finished ranking run for this criterion and protocol.")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    filename = f"{slug}-{criterion_name}-{protocol}-ranking.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    write_csv(response, run)
    return response


@staff_member_required
@require_GET
def campaign_results(request, slug: str):
    campaign = get_object_or_404(Campaign, slug=slug)
    first = campaign.criteria.order_by("criterion").first()
    if first is None:
        return redirect("admin:annotation_campaign_change", campaign.pk)
    return redirect("ranking:results", slug, first.criterion)
