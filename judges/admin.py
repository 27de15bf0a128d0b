from django.contrib import admin
from django.db import transaction
from django.db.models import Count
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from annotation.admin_base import ListFromTheAddressBar
from jobs.admin import progress_html
from ranking.service import request_judged_rankings

from .models import Judge, JudgeJob
from .service import request_judging, unscored_outputs


@admin.register(Judge)
class JudgeAdmin(ListFromTheAddressBar):
    """An automatic judge of a criterion: added here, run with the action; its page shows
    its agreement with the crowd and the fused ranking beside the humans-only one, as the
    judge's last job computed them. Judges never enter the annotators' HITs."""

    list_display = ["name", "criterion", "kind", "fused", "scored"]
    list_filter = ["kind", "fused", "criterion__campaign"]
    search_fields = ["name"]
    list_select_related = ["criterion__campaign"]
    readonly_fields = ["agreement_with_the_crowd", "fused_ranking", "unscored"]
    actions = ["score_outputs"]

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
        return format_html(
            "{} outputs of {} systems, as of {}: Pearson over outputs {}, within systems {};"
            " Spearman of the systems' means {}",
            found["outputs"],
            found["systems"],
            judge.summary_at,
            _two(found["output_pearson"]),
            _two(found["within_systems_pearson"]),
            _two(found["system_spearman"]),
        )

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
                    row["fused"]["mean"],
                    row["fused"]["lower"],
                    row["fused"]["upper"],
                    row["fused"]["rank_lo"],
                    row["fused"]["rank_hi"],
                    row["fused"]["cluster"],
                    row["humans"]["mean"],
                    row["humans"]["lower"],
                    row["humans"]["upper"],
                    row["humans"]["rank_lo"],
                    row["humans"]["rank_hi"],
                    row["humans"]["cluster"],
                    row["judgments"],
                    row["effective_judgments"],
                )
                for row in rows
            ),
        )
        return format_html("<table>{}{}</table>", header, body)

    @admin.action(description="Score the outputs the judge has not scored")
    def score_outputs(self, request, queryset):
        with transaction.atomic():
            jobs = [request_judging(judge) for judge in queryset]
        total = sum(job.outputs_total for job in jobs)
        self.message_user(
            request, f"{len(jobs)} job(s) queued for {total} outputs; progress under Judge jobs."
        )


def _two(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


@admin.register(JudgeJob)
class JudgeJobAdmin(ListFromTheAddressBar):
    list_display = ["id", "judge", "status", "progress_bar", "outputs_failed", "seconds"]
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
        "seconds",
    ]

    @admin.display(description="progress")
    def progress_bar(self, job):
        return progress_html(job.outputs_done, job.outputs_total)

    def has_add_permission(self, request):
        return False
