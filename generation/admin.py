from django.contrib import admin
from django.db import transaction

from annotation.admin_base import CampaignObjectAdmin
from jobs.admin import duration_column, progress_html

from .models import GenerationJob, HostedSystem
from .service import missing_items_count, output_count, request_generation


@admin.register(HostedSystem)
class HostedSystemAdmin(CampaignObjectAdmin):
    list_display = ["system", "campaign", "backend", "batch_size", "outputs", "missing"]
    list_filter = ["backend", "system__campaign"]
    search_fields = ["system__name"]
    list_select_related = ["system__campaign"]
    actions = ["generate_outputs"]

    def get_queryset(self, request):
        # Counted by subqueries in the list's one query, not by two queries per row.
        rows = super().get_queryset(request)
        return rows.annotate(n_outputs=output_count(), n_missing=missing_items_count())

    @admin.display(description="campaign")
    def campaign(self, hosted):
        return hosted.system.campaign

    @admin.display(description="outputs", ordering="n_outputs")
    def outputs(self, hosted):
        return hosted.n_outputs

    @admin.display(description="items lacking an output", ordering="n_missing")
    def missing(self, hosted):
        return hosted.n_missing

    @admin.action(description="Generate outputs for items that lack one", permissions=["change"])
    def generate_outputs(self, request, queryset):
        with transaction.atomic():
            jobs = [request_generation(hosted) for hosted in queryset]
        total = sum(job.items_total for job in jobs)
        self.message_user(
            request, f"{len(jobs)} job(s) queued for {total} items; progress under Generation jobs."
        )


@admin.register(GenerationJob)
class GenerationJobAdmin(CampaignObjectAdmin):
    list_display = [
        "id",
        "hosted",
        "status",
        "progress_bar",
        "outputs_created",
        "items_failed",
        "time_taken",
        "queued_at",
    ]
    list_filter = ["status", "hosted__backend"]
    readonly_fields = [
        "hosted",
        "status",
        "items_total",
        "items_done",
        "outputs_created",
        "items_failed",
        "item_errors",
        "error",
        "queued_at",
        "started_at",
        "finished_at",
        "time_taken",
    ]
    time_taken = duration_column("seconds", "time taken")

    @admin.display(description="progress")
    def progress_bar(self, job):
        return progress_html(job.items_done, job.items_total)

    def has_add_permission(self, request):
        return False
