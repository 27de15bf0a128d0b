from django import forms
from django.contrib import admin
from django.db import transaction
from django.urls import reverse
from django.utils.html import format_html

from annotation.admin_base import CampaignObjectAdmin, criterion_filter
from annotation.models import CampaignCriterion
from jobs.admin import duration_column, progress_html
from ranking.agreement.admin import RunAgreementInline

from .models import RankingRun, SystemResult
from .protocols import CHOICES, DEFAULT
from .service import request_ranking


class SystemResultInline(admin.TabularInline):
    model = SystemResult
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "position",
        "cluster",
        "system",
        "mu",
        "sigma",
        "ci_lo",
        "ci_hi",
        "rank_lo",
        "rank_hi",
        "comparisons",
    )

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(RankingRun)
class RankingRunAdmin(CampaignObjectAdmin):
    list_display = [
        "id",
        "campaign",
        "criterion_label",
        "protocol_label",
        "repetitions",
        "seed",
        "state",
        "progress_bar",
        "comparisons",
        "compute_time",
        "queued_at",
        "results_link",
    ]
    list_filter = ["status", "protocol", criterion_filter("criterion__name"), "campaign"]
    list_select_related = ["campaign", "criterion"]
    # What a run records about itself is shown, never edited.
    readonly_fields = [
        "status",
        "progress",
        "judgments",
        "hits",
        "comparisons",
        "queued_at",
        "started_at",
        "finished_at",
        "load_time",
        "compute_time",
        "note",
        "error",
    ]
    # The criterion names the campaign too (the run's campaign is set from it).
    fields = ["criterion", "protocol", "repetitions", "seed", *readonly_fields]
    inlines = [SystemResultInline, RunAgreementInline]
    actions = ["queue_again"]

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        # The registry's protocols as a choice (the field has no choices of its own).
        if db_field.name == "protocol":
            return forms.ChoiceField(choices=CHOICES, initial=DEFAULT, label="Protocol")
        if db_field.name == "criterion":  # each choice names its campaign: read with it
            kwargs["queryset"] = CampaignCriterion.objects.select_related("campaign")
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    load_time = duration_column("load_seconds", "load time")
    compute_time = duration_column("compute_seconds", "compute time")

    @admin.display(description="criterion", ordering="criterion__name")
    def criterion_label(self, run):
        return run.criterion.label

    @admin.display(description="protocol", ordering="protocol")
    def protocol_label(self, run):
        # The registry's label: the field itself has no choices to display.
        return run.protocol_label

    @admin.display(description="status", ordering="status")
    def state(self, run):
        """A run that found nothing to rank says so, rather than done (or, before, failed)."""
        return run.outcome

    @admin.display(description="progress")
    def progress_bar(self, run):
        return progress_html(run.progress, run.repetitions)

    @admin.display(description="")
    def results_link(self, run):
        url = reverse("ranking:results", args=[run.campaign.slug, run.criterion.name])
        return format_html('<a href="{}?protocol={}">results</a>', url, run.protocol)

    @admin.action(description="Queue the same computation again", permissions=["change"])
    def queue_again(self, request, queryset):
        with transaction.atomic():
            for run in queryset:
                request_ranking(run.criterion, run.protocol, run.repetitions, run.seed)
        self.message_user(request, f"{queryset.count()} run(s) queued.")

    def save_model(self, request, obj, form, change):
        """A run added here is sent to a worker once saved."""
        obj.campaign_id = obj.criterion.campaign_id
        super().save_model(request, obj, form, change)
        if not change:
            obj.send_to_worker()
