from django.contrib.admin.views.decorators import staff_member_required
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Campaign, CampaignCriterion, Judgment

from .charts import judgment_chart, rank_chart
from .export import write_csv
from .forms import ProtocolForm, RecomputeForm
from .metric_views import metrics_section
from .models import Protocol, RankingRun
from .service import request_ranking


def _get_task(slug: str, criterion: str) -> CampaignCriterion:
    return get_object_or_404(
        CampaignCriterion.objects.select_related("campaign"),
        campaign__slug=slug,
        criterion=criterion,
    )


def _latest_run(task: CampaignCriterion, protocol: str) -> RankingRun | None:
    runs = RankingRun.objects.for_task(task.campaign, task.criterion, protocol)
    return runs.finished().first()


@staff_member_required
@require_GET
def results(request, slug: str, criterion: str):
    task = _get_task(slug, criterion)
    protocol = ProtocolForm(request.GET).chosen()
    run = _latest_run(task, protocol)
    rows = list(run.results.select_related("system")) if run else []
    runs = RankingRun.objects.for_task(task.campaign, criterion, protocol)
    pending = runs.pending().first()
    judgments = Judgment.objects.for_criterion(task.campaign, criterion).submitted_per_system()
    context = {
        "judgment_chart": judgment_chart(judgments) if judgments else None,
        "task": task,
        "campaign": task.campaign,
        "protocol": protocol,
        "run": run,
        "rows": rows,
        "chart": rank_chart(rows) if rows else None,
        "pending": pending,
        "abandoned": None if pending else runs.abandoned().first(),
        "protocols": Protocol.choices,
        "form": RecomputeForm(initial={"protocol": protocol}),
        "last_failed": runs.filter(status=RankingRun.Status.FAILED).first(),
        "metrics": metrics_section(task.campaign, run),
    }
    return render(request, "ranking/results.html", context)


@staff_member_required
@require_POST
def recompute(request, slug: str, criterion: str):
    task = _get_task(slug, criterion)
    form = RecomputeForm(request.POST)
    if not form.is_valid():
        return HttpResponse(f"Invalid request: {form.errors.as_text()}", status=400)
    with transaction.atomic():
        request_ranking(task.campaign, criterion, **form.cleaned_data)
    url = reverse("ranking:results", args=[slug, criterion])
    return redirect(f"{url}?protocol={form.cleaned_data['protocol']}")


@staff_member_required
@require_GET
def results_csv(request, slug: str, criterion: str):
    task = _get_task(slug, criterion)
    protocol = ProtocolForm(request.GET).chosen()
    run = get_object_or_404(
        RankingRun.objects.for_task(task.campaign, criterion, protocol).finished()[:1]
    )
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    filename = f"{slug}-{criterion}-{protocol}-ranking.csv"
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
