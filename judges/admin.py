from django.contrib import admin
from django.db import transaction
from django.db.models import Count
from django.utils.html import format_html

from annotation.admin_base import ListFromTheAddressBar
from jobs.admin import progress_html

from .models import Judge, JudgeJob
from .service import agreement, request_judging, unscored_outputs


@admin.register(Judge)
class JudgeAdmin(ListFromTheAddressBar):
    """An automatic judge of a criterion: added here, run with the action, its agreement
    with the crowd on its page. Judges never enter the annotators' HITs."""

    list_display = ["name", "criterion", "kind", "scored"]
    list_filter = ["kind", "criterion__campaign"]
    search_fields = ["name"]
    list_select_related = ["criterion__campaign"]
    readonly_fields = ["agreement_with_the_crowd", "unscored"]
    actions = ["score_outputs"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_scores=Count("scores"))

    @admin.display(description="outputs scored", ordering="n_scores")
    def scored(self, judge):
        return judge.n_scores

    @admin.display(description="outputs not scored yet")
    def unscored(self, judge):
        return unscored_outputs(judge).count() if judge.pk else "-"

    @admin.display(description="agreement with the crowd")
    def agreement_with_the_crowd(self, judge):
        found = agreement(judge) if judge.pk else None
        if found is None:
            return "not yet: the judge and the crowd have not both scored three outputs"
        return format_html(
            "{} outputs of {} systems; Pearson over outputs {}, within systems {};"
            " Spearman of the systems' means {}",
            found["outputs"],
            found["systems"],
            _two(found["output_pearson"]),
            _two(found["within_systems_pearson"]),
            _two(found["system_spearman"]),
        )

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
