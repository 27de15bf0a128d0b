"""Admin of agreement between annotators: each ranking run's alpha on its change page (the
inline that ranking.admin adds to the run's admin), and a read-only list of annotators per
run, lowest agreement first, for finding those whose rankings go against everyone else's."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from annotation.admin_base import CampaignObjectAdmin
from jobs.admin import duration_column
from nlgdata.attention import describe_verdict

from .models import AnnotatorAgreement, RunAgreement


class RunAgreementInline(admin.StackedInline):
    model = RunAgreement
    can_delete = False
    fields = readonly_fields = (
        "alpha",
        "alpha_low",
        "alpha_high",
        "rounds",
        "units",
        "judgments",
        "time_taken",
        "per_annotator",
    )
    time_taken = duration_column("seconds", "time taken")

    @admin.display(description="per annotator")
    def per_annotator(self, agreement):
        url = reverse("admin:agreement_annotatoragreement_changelist")
        return format_html('<a href="{}?run__id__exact={}">annotators</a>', url, agreement.run_id)

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(AnnotatorAgreement)
class AnnotatorAgreementAdmin(CampaignObjectAdmin):
    # Counting every row for the 'N total' line costs what the page must not.
    show_full_result_count = False
    list_display = [
        "annotator",
        "run",
        "correlation_shown",
        "shared_units",
        "hits",
        "flagged_share_shown",
        "median_seconds_shown",
        "attention",
        "excluded",
    ]
    list_filter = ["run__campaign", "run__criterion", "excluded"]
    list_select_related = ["annotator", "run__campaign"]
    search_fields = ["annotator__external_id", "annotator__name"]

    @admin.display(description="agreement (r)", ordering="correlation")
    def correlation_shown(self, row):
        return None if row.correlation is None else f"{row.correlation:.3f}"

    @admin.display(description="flagged", ordering="flagged")
    def flagged_share_shown(self, row):
        return f"{row.flagged_share:.0%}"

    @admin.display(description="median seconds", ordering="median_seconds")
    def median_seconds_shown(self, row):
        return None if row.median_seconds is None else round(row.median_seconds)

    @admin.display(description="attention checks")
    def attention(self, row):
        annotator, campaign = row.annotator, row.run.campaign
        threshold = campaign.attention_p_threshold
        return describe_verdict(annotator.attention_checks, annotator.attention_p, threshold)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
