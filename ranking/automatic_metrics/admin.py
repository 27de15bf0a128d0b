"""Admin of metric runs: add one to have a worker compute
a campaign's metrics, or queue a finished one again."""

from django.contrib import admin
from django.db import transaction
from django.urls import reverse
from django.utils.html import format_html

from annotation.admin_base import CampaignObjectAdmin
from jobs.admin import duration_column

from .models import MetricResult, MetricRun
from .service import request_metrics


class MetricResultInline(admin.TabularInline):
    model = MetricResult
    extra = 0
    can_delete = False
    fields = readonly_fields = ("system", "metric", "value", "outputs")

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(MetricRun)
class MetricRunAdmin(CampaignObjectAdmin):
    list_display = ["id", "campaign", "status", "systems", "outputs", "compute_time"]
    list_display += ["queued_at", "results_link"]
    list_filter = ["status", "campaign"]
    readonly_fields = [
        "status",
        "systems",
        "outputs",
        "missing",
        "implementations",
        "queued_at",
        "started_at",
        "finished_at",
        "compute_time",
        "error",
    ]
    fields = ["campaign", *readonly_fields]
    inlines = [MetricResultInline]
    actions = ["queue_again"]

    compute_time = duration_column("compute_seconds", "compute time")

    @admin.display(description="")
    def results_link(self, run):
        url = reverse("ranking:campaign", args=[run.campaign.slug])
        return format_html('<a href="{}">results</a>', url)

    @admin.action(
        description="Compute the metrics of these campaigns again", permissions=["change"]
    )
    def queue_again(self, request, queryset):
        with transaction.atomic():
            for campaign in {run.campaign for run in queryset.select_related("campaign")}:
                request_metrics(campaign)
        self.message_user(request, "Metric run(s) queued.")

    def save_model(self, request, obj, form, change):
        """A run added here is sent to a worker once saved."""
        super().save_model(request, obj, form, change)
        if not change:
            obj.send_to_worker()
