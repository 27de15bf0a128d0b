"""The admin of the crowd's work: annotators, HITs, assignments and judgments.

What rankings count changes here only through the domain's functions, which bump the
criterion's judgments version and shift the kept loads: an annotator's exclusion (the
actions, or the field on their page, saved through `set_excluded`), a cleared flag (the
action: the flag itself is read-only), a deletion (removal.py). What an assignment or a
HIT is of (its HIT, annotator, status, item, criterion, slots) is read-only.
"""

from django.contrib import admin

from nlgdata.attention import describe_verdict

from .admin_base import (
    CampaignObjectAdmin,
    DeletesThroughRemoval,
    RecountAfterEdits,
    count_of,
    criterion_filter,
)
from .handout.submission import clear_flags
from .identity import set_excluded
from .models import Annotator, Assignment, Hit, HitOutput, Judgment


@admin.register(Annotator)
class AnnotatorAdmin(CampaignObjectAdmin, DeletesThroughRemoval):
    list_display = [
        "__str__",
        "campaign",
        "source",
        "is_excluded",
        "submitted",
        "flagged",
        "attention",
        "created_at",
    ]
    list_filter = [
        "campaign",
        "source",
        "is_excluded",
        "prolific_check",
        ("failed_attention_at", admin.EmptyFieldListFilter),
    ]
    list_select_related = ["campaign"]
    search_fields = ["external_id", "name"]
    readonly_fields = [
        "token",
        "study_data",
        "prolific_check",
        "attention",
        "failed_attention_at",
        "created_at",
    ]
    fixed_on_change = ("campaign",)
    recorded_counting_fields = ("is_excluded",)
    actions = ["exclude_from_rankings", "include_in_rankings"]

    def get_queryset(self, request):
        submitted = Assignment.objects.submitted()
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_submitted=count_of(submitted, "annotator"),
                n_flagged=count_of(submitted.flagged(), "annotator"),
            )
        )

    def save_model(self, request, obj, form, change):
        """Ticking or unticking 'is excluded' does what the actions do (the change page
        runs in one transaction: the other fields and the exclusion commit together)."""
        if not (change and "is_excluded" in form.changed_data):
            return super().save_model(request, obj, form, change)
        excluded = obj.is_excluded
        obj.is_excluded = not excluded  # as stored: set_excluded makes the change
        super().save_model(request, obj, form, change)
        set_excluded(obj, excluded)

    @admin.display(description="HITs done", ordering="n_submitted")
    def submitted(self, annotator):
        return annotator.n_submitted

    @admin.display(description="flagged", ordering="n_flagged")
    def flagged(self, annotator):
        return annotator.n_flagged

    @admin.display(description="attention checks", ordering="attention_p")
    def attention(self, annotator):
        threshold = annotator.campaign.attention_p_threshold
        return describe_verdict(annotator.attention_checks, annotator.attention_p, threshold)

    @admin.action(description="Exclude from rankings (reversible)", permissions=["change"])
    def exclude_from_rankings(self, request, queryset):
        for annotator in queryset:
            set_excluded(annotator, True)
        self.message_user(request, f"{len(queryset)} annotator(s) excluded from rankings.")

    @admin.action(description="Include in rankings again", permissions=["change"])
    def include_in_rankings(self, request, queryset):
        for annotator in queryset:
            set_excluded(annotator, False)
        self.message_user(request, f"{len(queryset)} annotator(s) included in rankings.")


class HitOutputInline(admin.TabularInline):
    """A HIT's slots are fixed once it exists: its judgments are of them."""

    model = HitOutput
    extra = 0
    raw_id_fields = ["output"]
    fields = ["position", "output", "degraded_text"]

    def get_readonly_fields(self, request, obj=None):
        return self.fields if obj is not None else ["degraded_text"]

    def has_add_permission(self, request, obj=None):
        return obj is None

    def has_delete_permission(self, request, obj=None):
        return obj is None


@admin.register(Hit)
class HitAdmin(CampaignObjectAdmin, RecountAfterEdits):
    # Counting every row for the 'N total' line costs what the page must not.
    show_full_result_count = False
    list_display = ["id", "campaign", "criterion_label", "item", "external_id", "created_at"]
    list_filter = ["campaign", criterion_filter("criterion__name")]
    list_select_related = ["campaign", "criterion", "item"]
    search_fields = ["external_id", "item__external_id"]
    raw_id_fields = ["item"]
    fixed_on_change = ("campaign", "criterion", "item")
    inlines = [HitOutputInline]

    @admin.display(description="criterion", ordering="criterion__name")
    def criterion_label(self, hit):
        return hit.criterion.label


class JudgmentInline(admin.TabularInline):
    model = Judgment
    extra = 0
    can_delete = False
    fields = readonly_fields = (
        "slot",
        "system",
        "score",
        "adds_information",
        "misses_information",
        "reflects_perfectly",
    )

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("slot__output__system")

    @admin.display(description="system")
    def system(self, judgment):
        return judgment.slot.output.system

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Assignment)
class AssignmentAdmin(CampaignObjectAdmin, RecountAfterEdits):
    # Counting every row for the 'N total' line costs what the page must not.
    show_full_result_count = False
    campaign_lookup = "hit__campaign"
    list_display = [
        "id",
        "hit",
        "annotator",
        "status",
        "flag",
        "started_at",
        "submitted_at",
        "seconds",
    ]
    list_filter = ["status", "flag", "hit__campaign", criterion_filter("hit__criterion__name")]
    search_fields = ["annotator__external_id", "hit__external_id"]
    list_select_related = ["hit", "annotator"]
    # What the assignment is of and where it stands: the flag is cleared by the action.
    readonly_fields = ["hit", "annotator", "status", "flag"]
    inlines = [JudgmentInline]
    actions = ["clear_flag"]

    def has_add_permission(self, request):
        # Assignments are made by the hand-out, which keeps the loads they count in.
        return False

    @admin.display(description="seconds")
    def seconds(self, assignment):
        taken = assignment.seconds_taken
        return None if taken is None else round(taken)

    @admin.action(
        description="Clear the flag (count these HITs in rankings)", permissions=["change"]
    )
    def clear_flag(self, request, queryset):
        changed = clear_flags(queryset)
        self.message_user(request, f"{changed} assignment(s) unflagged.")


@admin.register(Judgment)
class JudgmentAdmin(CampaignObjectAdmin, DeletesThroughRemoval):
    # Counting every row for the 'N total' line costs what the page must not.
    show_full_result_count = False
    campaign_lookup = "assignment__hit__campaign"
    list_display = [
        "id",
        "assignment",
        "system",
        "score",
        "adds_information",
        "misses_information",
        "reflects_perfectly",
    ]
    list_filter = [
        "assignment__hit__campaign",
        criterion_filter("criterion__name"),
        "slot__output__system",
    ]
    list_select_related = [
        "assignment__annotator",
        "assignment__hit",
        "slot__output__system",
    ]

    @admin.display(description="system")
    def system(self, judgment):
        return judgment.slot.output.system

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
