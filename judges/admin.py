from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.timezone import localtime
from django.views.decorators.http import require_GET

from annotation.admin_base import CampaignObjectAdmin
from jobs.admin import duration_column, progress_html
from ranking.service import request_judged_rankings

from .export import FIGURES, write_agreement_csv
from .models import Judge, JudgeJob
from .service import request_judging, unscored_outputs


@admin.register(Judge)
class JudgeAdmin(CampaignObjectAdmin):
    """An automatic judge of a criterion: added here, run with the action; its page shows
    its agreement with the crowd (figures with bootstrap intervals, bias per system; as CSV
    from the page's link or the list's action) and the fused ranking beside the humans-only
    one, as the judge's last job computed them. Judges never enter the annotators' HITs."""

    list_display = ["name", "criterion", "kind", "fused", "scored"]
    list_filter = ["kind", "fused", "criterion__campaign"]
    search_fields = ["name"]
    list_select_related = ["criterion__campaign"]
    readonly_fields = ["agreement_with_the_crowd", "bias_per_system", "fused_ranking", "unscored"]
    actions = ["score_outputs", "download_agreement"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_scores=Count("scores"))

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if "fused" in form.changed_data:  # switched on: rank with its scores; off: nothing
            request_judged_rankings(obj.criterion)

    @admin.display(description="outputs scored", ordering="n_scores")
    def scored(self, judge):
        return judge.n_scores

    @admin.display(description="outputs not scored yet")
    def unscored(self, judge):
        return unscored_outputs(judge).count() if judge.pk else "-"

    @admin.display(description="agreement with the crowd")
    def agreement_with_the_crowd(self, judge):
        found = (judge.summary or {}).get("agreement")
        if found is None:
            return "not yet: the judge and the crowd have not both scored three outputs"
        intervals = found.get("intervals") or {}
        header = mark_safe(  # a constant: nothing from the data
            "<tr><th>figure</th><th>value</th><th>95% interval</th><th>over</th></tr>"
        )
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td></tr>",
            (
                (label, _two(found[name]), _interval(intervals.get(name)), found.get(n), n)
                for name, (label, n) in FIGURES.items()
                if name in found
            ),
        )
        download = reverse("admin:judges_judge_agreement_csv", args=[judge.pk])
        return format_html(
            "<p>{} outputs of {} systems, {} human-judged pairs, as of {}; intervals: percentile"
            ' bootstrap over {} items, {} resamples. <a href="{}">Download as CSV</a></p>'
            '<div style="overflow-x: auto"><table>{}{}</table></div>',
            found["outputs"],
            found["systems"],
            found.get("pairs", "-"),
            date_format(localtime(judge.summary_at), "Y-m-d H:i T") if judge.summary_at else "-",
            found.get("items", "-"),
            found.get("resamples", "-"),
            download,
            header,
            body,
        )

    @admin.display(description="bias per system (judge minus humans, z scale)")
    def bias_per_system(self, judge):
        rows = ((judge.summary or {}).get("agreement") or {}).get("bias") or []
        if not rows:
            return "not yet: run the judge (the action on the list) to compute it"
        header = mark_safe(  # a constant: nothing from the data
            "<tr><th>system</th><th>judge</th><th>humans</th><th>bias (95% interval)</th>"
            "<th>outputs</th></tr>"
        )
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td></tr>",
            (
                (
                    row["system"],
                    _two(row["judge"]),
                    _two(row["humans"]),
                    _two(row["bias"]),
                    _interval([row["lower"], row["upper"]]),
                    row["outputs"],
                )
                for row in rows
            ),
        )
        return scrolling_table(header, body)

    def get_urls(self):
        download = path(
            "<int:judge_id>/agreement.csv",
            self.admin_site.admin_view(require_GET(self.agreement_csv_view)),
            name="judges_judge_agreement_csv",
        )
        return [download, *super().get_urls()]

    def agreement_csv_view(self, request, judge_id):
        # Permission before the row: staff who may see no judge learn nothing of which exist.
        if not self.has_view_permission(request):
            raise PermissionDenied
        judge = get_object_or_404(Judge.objects.select_related("criterion__campaign"), pk=judge_id)
        if not self.has_view_permission(request, judge):
            raise PermissionDenied
        return _agreement_csv([judge], f"agreement-{judge.name}.csv")

    @admin.action(description="Download the agreement with the crowd as CSV")
    def download_agreement(self, request, queryset):
        rows = queryset.select_related("criterion__campaign").order_by("pk")
        return _agreement_csv(rows, "agreement.csv")

    @admin.display(description="fused ranking beside the humans-only one")
    def fused_ranking(self, judge):
        rows = (judge.summary or {}).get("ranking") or []
        if not rows:
            return "not yet: run the judge (the action on the list) to compute it"
        header = mark_safe(  # a constant: nothing from the data
            "<tr><th>system</th><th>fused mean (95% interval)</th><th>ranks</th>"
            "<th>cluster</th><th>humans only</th><th>ranks</th><th>cluster</th>"
            "<th>human judgments</th><th>worth</th></tr>"
        )
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{} ({} to {})</td><td>{}-{}</td><td>{}</td>"
            "<td>{} ({} to {})</td><td>{}-{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    row["system"],
                    _three(row["fused"]["mean"]),
                    _three(row["fused"]["lower"]),
                    _three(row["fused"]["upper"]),
                    row["fused"]["rank_lo"],
                    row["fused"]["rank_hi"],
                    row["fused"]["cluster"],
                    _three(row["humans"]["mean"]),
                    _three(row["humans"]["lower"]),
                    _three(row["humans"]["upper"]),
                    row["humans"]["rank_lo"],
                    row["humans"]["rank_hi"],
                    row["humans"]["cluster"],
                    row["judgments"],
                    row["effective_judgments"],
                )
                for row in rows
            ),
        )
        return scrolling_table(header, body)

    @admin.action(description="Score the outputs the judge has not scored", permissions=["change"])
    def score_outputs(self, request, queryset):
        with transaction.atomic():
            jobs = [request_judging(judge) for judge in queryset]
        total = sum(job.outputs_total for job in jobs)
        self.message_user(
            request, f"{len(jobs)} job(s) queued for {total} outputs; progress under Judge jobs."
        )


def scrolling_table(header, body) -> str:
    """A table that scrolls sideways in its own box on a phone, not the whole page."""
    return format_html('<div style="overflow-x: auto"><table>{}{}</table></div>', header, body)


def _three(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _two(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _interval(bounds: list | None) -> str:
    if not bounds or bounds[0] is None:
        return "-"
    return f"({bounds[0]:.2f} to {bounds[1]:.2f})"


def _agreement_csv(judges, filename: str) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    # The judge's name is a slug: nothing to quote in the header.
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    write_agreement_csv(response, judges)
    return response


@admin.register(JudgeJob)
class JudgeJobAdmin(CampaignObjectAdmin):
    list_display = ["id", "judge", "status", "progress_bar", "outputs_failed", "time_taken"]
    list_filter = ["status", "judge__kind"]
    readonly_fields = [
        "judge",
        "status",
        "outputs_total",
        "outputs_done",
        "outputs_failed",
        "output_errors",
        "error",
        "queued_at",
        "started_at",
        "finished_at",
        "time_taken",
    ]
    time_taken = duration_column("seconds", "time taken")

    @admin.display(description="progress")
    def progress_bar(self, job):
        return progress_html(job.outputs_done, job.outputs_total)

    def has_add_permission(self, request):
        return False
