from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.forms.models import BaseInlineFormSet
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_GET

from nlgdata.attention import describe_verdict
from nlgdata.datafiles import DataFileError

from .datafiles.exporters import ExportError, export
from .datafiles.importers import import_items, import_outputs
from .datafiles.ratings_import import import_ratings
from .forms_admin import (
    CampaignAdminForm,
    DataFileUploadForm,
    InvitationForm,
    JudgmentExportForm,
)
from .handout.submission import clear_flags
from .identity import invite, invite_path, prolific_entry_url, set_excluded, site_url
from .models import (
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    DataFile,
    Hit,
    HitOutput,
    Item,
    Judgment,
    Output,
    System,
)
from .monitor import BAR_WIDTH, CHART_HEIGHT, campaign_progress, hour_bars
from .prolific import ProlificError, review_submissions


class CriterionFormSet(BaseInlineFormSet):
    def save_existing(self, form, obj, commit=True):
        # Only the fields edited: the row also holds what every hand-out and submission
        # writes under its lock (judgments version, online estimate), which this form read
        # earlier and must not write back.
        obj = form.save(commit=False)
        if commit and form.changed_data:
            obj.save(update_fields=form.changed_data)
        return obj


class CampaignCriterionInline(admin.TabularInline):
    model = CampaignCriterion
    formset = CriterionFormSet
    extra = 0
    fields = [
        "criterion",
        "is_open",
        "question",
        "comprehension_check",
        "follow_up_url",
        "coverage_required",
        "composition",
        "balanced_share",
        "close_when_stable_for",
    ]


class DataFileInline(admin.TabularInline):
    model = DataFile
    extra = 0
    can_delete = False
    fields = readonly_fields = ("kind", "name", "system", "rows", "summary", "imported_at")

    def has_add_permission(self, request, obj=None):
        return False


def count_of(rows: QuerySet, outer: str):
    """The number of `rows` whose `outer` field is the outer row, as a subquery: each count
    reads its own index instead of one join of every relation counted (which multiplied
    items by systems by HITs, 43.8 million rows for E2E's campaign)."""
    counted = (
        rows.filter(**{outer: OuterRef("pk")}).order_by().values(outer).annotate(n=Count("pk"))
    )
    return Coalesce(Subquery(counted.values("n")), 0)


class RecountAfterEdits(admin.ModelAdmin):
    """Admin edits and deletions of what the hand-out counts (items, systems, outputs,
    HITs, assignments, a campaign's HIT size) are rare and may change anything: the next
    hand-out in the campaign counts again from the rows."""

    campaign_lookup = "campaign"

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        self._recount(type(obj).objects.filter(pk=obj.pk))

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        self._recount(type(form.instance).objects.filter(pk=form.instance.pk))

    def delete_model(self, request, obj):
        campaigns = list(self._campaigns(type(obj).objects.filter(pk=obj.pk)))
        super().delete_model(request, obj)
        CampaignCriterion.objects.filter(campaign__in=campaigns).record_pool_change(recount=True)

    def delete_queryset(self, request, queryset):
        campaigns = list(self._campaigns(queryset))
        super().delete_queryset(request, queryset)
        CampaignCriterion.objects.filter(campaign__in=campaigns).record_pool_change(recount=True)

    def _campaigns(self, queryset):
        return queryset.values_list(self.campaign_lookup, flat=True).distinct()

    def _recount(self, queryset) -> None:
        campaigns = self._campaigns(queryset)
        CampaignCriterion.objects.filter(campaign__in=campaigns).record_pool_change(recount=True)


@admin.register(Campaign)
class CampaignAdmin(RecountAfterEdits):
    campaign_lookup = "pk"
    list_display = ["name", "slug", "status", "item_count", "system_count", "hit_count", "links"]
    list_filter = ["status"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [CampaignCriterionInline, DataFileInline]
    actions = ["review_prolific_submissions"]
    form = CampaignAdminForm
    readonly_fields = ["entry_links"]
    fieldsets = [
        (None, {"fields": ["name", "slug", "status", "description"]}),
        ("Where annotators start", {"fields": ["entry_links"]}),
        ("Task", {"fields": ["outputs_per_hit", "instructions"]}),
        ("Standard", {"fields": ["standard_text", "standard_input_kind", "standard_input"]}),
        (
            "Crowd settings",
            {
                "fields": [
                    "max_hits_per_annotator",
                    "min_seconds_per_hit",
                    "attention_check_every",
                    "attention_p_threshold",
                    "assignment_timeout_minutes",
                    "target_hits",
                    "pay_per_hit",
                    "completion_code",
                    "failed_completion_code",
                    "prolific_study_id",
                    "prolific_token_env",
                ]
            },
        ),
    ]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_items=count_of(Item.objects.all(), "campaign"),
                n_systems=count_of(System.objects.all(), "campaign"),
                n_hits=count_of(Hit.objects.all(), "campaign"),
            )
        )

    @admin.display(description="items", ordering="n_items")
    def item_count(self, campaign):
        return campaign.n_items

    @admin.display(description="systems", ordering="n_systems")
    def system_count(self, campaign):
        return campaign.n_systems

    @admin.display(description="HITs", ordering="n_hits")
    def hit_count(self, campaign):
        return campaign.n_hits

    @admin.display(description="")
    def links(self, campaign):
        # The project's admin (evalsite/admin.py) adds the link to the results pages.
        upload = reverse("admin:annotation_campaign_upload", args=[campaign.pk])
        export = reverse("admin:annotation_campaign_export", args=[campaign.pk])
        monitor = reverse("admin:annotation_campaign_monitor", args=[campaign.pk])
        return format_html(
            '<a href="{}">Upload data</a> · <a href="{}">Export judgments</a> · '
            '<a href="{}">Monitor</a>',
            upload,
            export,
            monitor,
        )

    @admin.display(description="Prolific study URL, per criterion")
    def entry_links(self, campaign):
        """The URL to paste into the Prolific study, with Prolific's placeholders; invited
        annotators get links of their own (Annotators, or manage.py invite_annotators)."""
        if campaign.pk is None:
            return "Save the campaign first."
        rows = [
            format_html(
                "<li>{}: <code>{}</code></li>",
                criterion.get_criterion_display(),
                prolific_entry_url(criterion),
            )
            for criterion in campaign.criteria.order_by("criterion")
        ]
        invite_url = reverse("admin:annotation_campaign_invite", args=[campaign.pk])
        return format_html(
            '<ul>{}</ul><p>Annotators of your own: <a href="{}">invite them by name</a>.</p>',
            format_html_join("", "{}", ((row,) for row in rows)),
            invite_url,
        )

    @admin.action(
        description="Review Prolific submissions (flag who is not in the study, approve who"
        " passed with counted work, reject who failed, release returned places)",
        permissions=["change"],
    )
    def review_prolific_submissions(self, request, queryset):
        for campaign in queryset:
            try:
                review = review_submissions(campaign)
            except ProlificError as error:
                messages.error(request, f"{campaign}: stopped: {error}")
            else:
                messages.success(request, f"{campaign}: {review}.")

    def get_urls(self):
        upload = path(
            "<int:campaign_id>/upload/",
            self.admin_site.admin_view(self.upload_view),
            name="annotation_campaign_upload",
        )
        export = path(
            "<int:campaign_id>/export/",
            self.admin_site.admin_view(require_GET(self.export_view)),
            name="annotation_campaign_export",
        )
        monitor = path(
            "<int:campaign_id>/monitor/",
            self.admin_site.admin_view(require_GET(self.monitor_view)),
            name="annotation_campaign_monitor",
        )
        invite = path(
            "<int:campaign_id>/invite/",
            self.admin_site.admin_view(self.invite_view),
            name="annotation_campaign_invite",
        )
        return [upload, export, monitor, invite, *super().get_urls()]

    def invite_view(self, request, campaign_id):
        """Named annotators and their private links, one per criterion."""
        campaign = get_object_or_404(Campaign, pk=campaign_id)
        if not self.has_change_permission(request, campaign):
            raise PermissionDenied
        form = InvitationForm(request.POST or None)
        invited = []
        if request.method == "POST" and form.is_valid():
            root = site_url(request)  # the host the organiser reached the admin at
            criteria = list(campaign.criteria.order_by("criterion"))
            for name in form.cleaned_data["names"]:
                annotator = invite(campaign, name)
                links = [(c, root + invite_path(annotator, c.criterion)) for c in criteria]
                invited.append((annotator, links))
        title = f"Invite annotators to {campaign}"
        return self._campaign_page(
            request, campaign, "invite.html", title, form=form, invited=invited
        )

    def monitor_view(self, request, campaign_id):
        """The live monitor; with ?part=progress only its progress section, which the page
        fetches again every MONITOR_REFRESH_SECONDS instead of reloading."""
        campaign = get_object_or_404(Campaign, pk=campaign_id)
        if not self.has_view_permission(request, campaign):
            raise PermissionDenied
        rows = [
            (progress, hour_bars(progress.per_hour))
            for progress in campaign_progress(campaign, timezone.now())
        ]
        part = request.GET.get("part") == "progress"
        return self._campaign_page(
            request,
            campaign,
            "_monitor_progress.html" if part else "monitor.html",
            f"Live monitor: {campaign}",
            rows=rows,
            chart_height=CHART_HEIGHT,
            bar_width=BAR_WIDTH,
            refresh_seconds=MONITOR_REFRESH_SECONDS,
        )

    def _campaign_page(self, request, campaign, template: str, title: str, **context):
        """One of the campaign's own admin pages (templates/admin/annotation/)."""
        context = {
            **self.admin_site.each_context(request),
            "campaign": campaign,
            "opts": self.model._meta,
            "title": title,
            **context,
        }
        return TemplateResponse(request, f"admin/annotation/{template}", context)

    def upload_view(self, request, campaign_id):
        campaign = get_object_or_404(Campaign, pk=campaign_id)
        if not self.has_change_permission(request, campaign):
            return redirect("admin:index")
        form = DataFileUploadForm(request.POST or None, request.FILES or None, campaign=campaign)
        if request.method == "POST" and form.is_valid():
            try:
                summary = import_uploaded(campaign, form.cleaned_data, request.user)
            except DataFileError as error:
                messages.error(request, f"{error} Nothing was imported.")
            else:
                messages.success(request, str(summary))
                return redirect("admin:annotation_campaign_change", campaign.pk)
        title = f"Upload data to {campaign}"
        return self._campaign_page(request, campaign, "upload.html", title, form=form)

    def export_view(self, request, campaign_id):
        """The export form; once filled in, the file, streamed as it is written."""
        campaign = get_object_or_404(Campaign, pk=campaign_id)
        if not self.has_view_permission(request, campaign):
            raise PermissionDenied
        form = JudgmentExportForm(request.GET or None, campaign=campaign)
        if form.is_valid():
            try:
                return export_response(campaign, form.cleaned_data)
            except ExportError as error:
                form.add_error(None, str(error))
        title = f"Export judgments of {campaign}"
        return self._campaign_page(request, campaign, "export.html", title, form=form)


# How often the monitor page fetches its progress section again.
MONITOR_REFRESH_SECONDS = 15

EXPORT_FILES = {
    "csv": ("text/csv; charset=utf-8", "judgments.csv"),
    "jsonl": ("application/x-ndjson; charset=utf-8", "judgments.jsonl"),
    "e2e": ("text/csv; charset=utf-8", "e2e-ratings.csv"),
}


def export_response(campaign: Campaign, data: dict) -> StreamingHttpResponse:
    criterion = data["criterion"]
    chunks = export(campaign, data["file_format"], criterion)
    content_type, suffix = EXPORT_FILES[data["file_format"]]
    name = f"{campaign.slug}-{criterion.criterion if criterion else 'all'}-{suffix}"
    response = StreamingHttpResponse(chunks, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def import_uploaded(campaign: Campaign, data: dict, user):
    # The importers read the upload as a stream: memory follows a batch of rows, not the file.
    upload = data["file"]
    name = upload.name
    kind = data["kind"]
    with transaction.atomic():
        if kind == DataFile.Kind.ITEMS:
            return import_items(campaign, upload, name, user=user)
        if kind == DataFile.Kind.RATINGS:
            return import_ratings(campaign, upload, name, data["criterion"] or None, user=user)
        system = data["system"] or System.objects.create(campaign=campaign, name=data["new_system"])
        return import_outputs(campaign, system, upload, name, user=user)


@admin.register(Item)
class ItemAdmin(RecountAfterEdits):
    # Counting every row for the 'N total' line costs what the page must not.
    show_full_result_count = False
    list_display = ["external_id", "campaign", "input_kind", "input_key_short", "output_count"]
    list_filter = ["campaign", "input_kind"]
    search_fields = ["external_id", "input_key"]
    list_select_related = ["campaign"]

    def get_queryset(self, request):
        return (
            super().get_queryset(request).annotate(n_outputs=count_of(Output.objects.all(), "item"))
        )

    @admin.display(description="input")
    def input_key_short(self, item):
        return item.input_key[:120]

    @admin.display(description="outputs", ordering="n_outputs")
    def output_count(self, item):
        return item.n_outputs


@admin.register(System)
class SystemAdmin(RecountAfterEdits):
    list_display = [
        "name",
        "label",
        "campaign",
        "architecture",
        "is_active",
        "output_count",
    ]
    list_filter = ["campaign", "architecture", "is_active"]
    list_select_related = ["campaign"]
    search_fields = ["name", "label"]
    # Judgments are counted on the change page of one system only: counted for every
    # system of a list, they read every judgment of the campaign (the results page shows
    # them per system, from the ranking run).
    readonly_fields = ["judgment_count"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(n_outputs=count_of(Output.objects.all(), "system"))
        )

    @admin.display(description="outputs", ordering="n_outputs")
    def output_count(self, system):
        return system.n_outputs

    def save_model(self, request, obj, form, change):
        """Switching a system on or off changes what its campaign's rankings are about, and
        which items can be given out."""
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            if change and "is_active" in form.changed_data:
                obj.campaign.criteria.record_judgments_change()

    @admin.display(description="judgments")
    def judgment_count(self, system):
        if system.pk is None:
            return 0
        return Judgment.objects.of_originals().filter(slot__output__system=system).count()


@admin.register(Output)
class OutputAdmin(RecountAfterEdits):
    # Counting every row for the 'N total' line costs what the page must not.
    show_full_result_count = False
    campaign_lookup = "item__campaign"
    list_display = ["id", "system", "item", "origin", "text", "created_at"]
    list_filter = ["origin", "system__campaign", "system"]
    search_fields = ["text", "item__external_id", "system__name"]
    list_select_related = ["system", "item"]
    raw_id_fields = ["item", "system"]
    # The model's ordering (item, system) sorts by the related rows' own orderings, a join
    # and a sort of every output; by their ids it is the (item, system) index, read in order.
    ordering = ["item_id", "system_id"]


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
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

    @admin.action(description="Exclude from rankings (reversible)")
    def exclude_from_rankings(self, request, queryset):
        for annotator in queryset:
            set_excluded(annotator, True)
        self.message_user(request, f"{len(queryset)} annotator(s) excluded from rankings.")

    @admin.action(description="Include in rankings again")
    def include_in_rankings(self, request, queryset):
        for annotator in queryset:
            set_excluded(annotator, False)
        self.message_user(request, f"{len(queryset)} annotator(s) included in rankings.")


class HitOutputInline(admin.TabularInline):
    model = HitOutput
    extra = 0
    raw_id_fields = ["output"]
    fields = ["position", "output", "degraded_text"]
    readonly_fields = ["degraded_text"]


@admin.register(Hit)
class HitAdmin(RecountAfterEdits):
    # Counting every row for the 'N total' line costs what the page must not.
    show_full_result_count = False
    list_display = ["id", "campaign", "criterion", "item", "external_id", "created_at"]
    list_filter = ["campaign", "criterion"]
    list_select_related = ["campaign", "item"]
    search_fields = ["external_id", "item__external_id"]
    raw_id_fields = ["item"]
    inlines = [HitOutputInline]


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
class AssignmentAdmin(RecountAfterEdits):
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
    list_filter = ["status", "flag", "hit__campaign", "hit__criterion"]
    search_fields = ["annotator__external_id", "hit__external_id"]
    list_select_related = ["hit", "annotator"]
    raw_id_fields = ["hit", "annotator"]
    inlines = [JudgmentInline]
    actions = ["clear_flag"]

    @admin.display(description="seconds")
    def seconds(self, assignment):
        taken = assignment.seconds_taken
        return None if taken is None else round(taken)

    @admin.action(description="Clear the flag (count these HITs in rankings)")
    def clear_flag(self, request, queryset):
        changed = clear_flags(queryset)
        self.message_user(request, f"{changed} assignment(s) unflagged.")


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    # Counting every row for the 'N total' line costs what the page must not.
    show_full_result_count = False
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
        "assignment__hit__criterion",
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


@admin.register(DataFile)
class DataFileAdmin(admin.ModelAdmin):
    list_display = ["name", "campaign", "kind", "system", "rows", "imported_at", "imported_by"]
    list_filter = ["campaign", "kind"]
    readonly_fields = [
        "campaign",
        "kind",
        "name",
        "sha256",
        "system",
        "rows",
        "summary",
        "imported_by",
        "imported_at",
    ]

    def has_add_permission(self, request):
        return False
