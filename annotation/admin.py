from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.forms.formsets import DELETION_FIELD_NAME
from django.forms.models import BaseInlineFormSet
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_GET, require_http_methods

from . import (
    admin_published,
    admin_uploads,
    admin_work,  # noqa: F401  (registers the admins of annotators, HITs, judgments)
)
from .admin_base import (
    HTTPS_URL_FIELDS,
    AnnotationAdmin,
    CampaignObjectAdmin,
    RecountAfterEdits,
    count_of,
    may_delete_kind,
    plan_deletion,
)
from .datafiles.exporters import DOWNLOADS, ExportError, export
from .forms_admin import (
    CampaignAdminForm,
    CriterionAdminForm,
    InvitationForm,
    JudgmentExportForm,
)
from .identity import invite, invite_path, prolific_entry_url, site_url
from .judging import why_not_open
from .models import (
    DEFAULT_QUESTIONS,
    Campaign,
    CampaignCriterion,
    DataFile,
    Hit,
    Item,
    Judgment,
    Output,
    System,
    default_form,
)
from .monitor import (
    BAR_WIDTH,
    CHART_HEIGHT,
    asked_on_other_pages,
    campaign_progress,
    empty_outputs,
    hour_bars,
    off_scale_by_annotator,
    scale_rules,
)
from .permissions import accepts_upload
from .prolific import ProlificError, review_submissions
from .removal import campaign_rows, delete_campaign


class CriterionFormSet(BaseInlineFormSet):
    def save_existing(self, form, obj, commit=True):
        # Only the fields edited: the row also holds what every hand-out and submission
        # writes under its lock (judgments version, online estimate), which this form read
        # earlier and must not write back.
        obj = form.save(commit=False)
        if commit and form.changed_data:
            obj.save(update_fields=form.changed_data)
        return obj

    def full_clean(self):
        # The criteria are checked as this save leaves them: a criterion's settings may name
        # another one added in the same save, in either order (DA's `also_asks`).
        if self.is_bound:
            after_save = self.criteria_after_save()
            for form in self.forms:
                form.instance.criteria_after_save = after_save
        super().full_clean()

    def criteria_after_save(self) -> dict[str, str]:
        """name -> judgment form of each criterion the save keeps or adds, as the rows are
        filled in (their own checks come after this)."""
        found = {}
        for form in self.forms:
            if self.can_delete and form[DELETION_FIELD_NAME].value():
                continue
            if form.instance.pk:
                found[form.instance.name] = form.instance.form
            elif form.has_changed():
                found[str(form["name"].value() or "").strip()] = str(form["form"].value())
        return found

    def clean(self):
        # Deleting a criterion deletes its HITs, judgments and rankings with it: one with
        # HITs is closed instead.
        super().clean()
        self.check_standard()
        for form in self.deleted_forms:
            criterion = form.instance
            if criterion.pk and Hit.objects.for_criterion(criterion).exists():
                raise ValidationError(
                    f"The {criterion.name} criterion has HITs: untick 'is open' to close"
                    " it instead of deleting it."
                )

    def check_standard(self) -> None:
        """The campaign as its form leaves it (status, standard) with the criteria this
        save leaves: opened without a standard that RankME's pages need, it is refused. A
        campaign saved without criteria gets RankME's two (CampaignAdmin.save_related)."""
        after_save = self.criteria_after_save() or dict.fromkeys(DEFAULT_QUESTIONS, default_form())
        problem = why_not_open(self.instance, after_save)
        if problem:
            raise ValidationError(problem)


class CampaignCriterionInline(admin.StackedInline):
    # Stacked: eight settings with their help side by side were 2,039 px wide.
    model = CampaignCriterion
    form = CriterionAdminForm
    formset = CriterionFormSet
    formfield_overrides = HTTPS_URL_FIELDS
    extra = 0
    fields = [
        "name",
        "form",
        "settings",
        "is_open",
        "question",
        "shows_input",
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
    change_list_template = "admin/annotation/campaign/change_list.html"  # + "Load a dataset"
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
                    "accepts_mturk",
                ]
            },
        ),
    ]

    def save_related(self, request, form, formsets, change):
        """A campaign added without a criterion gets E2E's two, saying so: with none, its
        annotators' link would lead nowhere and nothing would say why."""
        super().save_related(request, form, formsets, change)
        campaign = form.instance
        if not change and not campaign.criteria.exists():
            added = CampaignCriterion.objects.add_defaults(campaign)
            names = " and ".join(criterion.name for criterion in added)
            messages.info(
                request,
                f"{campaign}: no criterion was given, so it has {names} (RankME's E2E"
                " questions; naturalness without the input). Change or close them below.",
            )

    def get_deleted_objects(self, objs, request):
        """What deleting the campaigns deletes, as a count per kind of row. Django lists
        every row: for E2E's campaign (100,000 judgments) that took longer than a request
        may, and on PostgreSQL failed outright (a query of over 65,535 parameters).
        Permissions are checked as for a campaign's other rows (`may_delete_kind`); rows
        that refuse the deletion (`plan_deletion`: bonuses sent to Prolific) are listed as
        protected, and Django's page then deletes nothing."""
        summary: list = []
        totals: dict[str, int] = {}
        perms_needed: set[str] = set()
        protected: list[str] = []
        for campaign in objs:
            protected += plan_deletion(Campaign.objects.filter(pk=campaign.pk)).refusals()
            counts = [(m._meta, n) for m, n in campaign_rows(campaign).items() if n]
            summary += [str(campaign), [f"{n:,} {opts.verbose_name_plural}" for opts, n in counts]]
            for opts, n in counts:
                kind = str(opts.verbose_name_plural)
                totals[kind] = totals.get(kind, 0) + n
                if not may_delete_kind(request, self.admin_site, opts.model):
                    perms_needed.add(str(opts.verbose_name))
        return summary, totals, perms_needed, protected

    def delete_model(self, request, obj):
        delete_campaign(obj)

    def delete_queryset(self, request, queryset):
        for campaign in queryset:
            delete_campaign(campaign)

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

    def get_object(self, request, object_id, from_field=None):
        campaign = super().get_object(request, object_id, from_field)
        if campaign is not None:
            # For entry_links, which Django calls with the campaign alone: whole study URLs
            # (Prolific takes no bare path) on the host the organiser reached the admin at,
            # as invitations' links are (SITE_URL serves where there is no request).
            campaign.admin_request = request
        return campaign

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # The campaign's own pages, at the top of its form too, not only in the list.
        if obj is not None and obj.pk is not None:
            context["campaign_links"] = self.links(obj)
        return super().render_change_form(request, context, add, change, form_url, obj)

    @admin.display(description="Prolific study URL, per criterion")
    def entry_links(self, campaign):
        """The URL to paste into the Prolific study, with Prolific's placeholders; invited
        annotators get links of their own (Annotators, or manage.py invite_annotators)."""
        if campaign.pk is None:
            return "Save the campaign first."
        request = getattr(campaign, "admin_request", None)
        rows = [
            format_html(
                "<li>{}: <code>{}</code></li>",
                criterion.label,
                prolific_entry_url(criterion, request),
            )
            for criterion in campaign.criteria.order_by("name")
        ]
        invite_url = reverse("admin:annotation_campaign_invite", args=[campaign.pk])
        return format_html(
            '<ul>{}</ul><p>Annotators of your own: <a href="{}">invite them by name</a>.</p>',
            format_html_join("", "{}", ((row,) for row in rows)),
            invite_url,
        )

    # Short: the action menu is as wide as its longest entry, and a longer one pushed the
    # campaign list past a 1280-pixel window.
    @admin.action(
        description="Review Prolific submissions (approve, reject, flag, release places)",
        permissions=["change"],
    )
    def review_prolific_submissions(self, request, queryset):
        """Flag who is not in the study, approve who passed with counted work, reject who
        failed, release the places of returned submissions."""
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
            self.admin_site.admin_view(require_http_methods(["GET", "POST"])(self.upload_view)),
            name="annotation_campaign_upload",
        )
        upload_job = path(
            "<int:campaign_id>/upload/<int:job_id>/",
            self.admin_site.admin_view(require_GET(self.upload_job_view)),
            name="annotation_campaign_upload_job",
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
        load = path(
            "load-published/",
            self.admin_site.admin_view(require_http_methods(["GET", "POST"])(self.load_view)),
            name="annotation_campaign_load_published",
        )
        load_job = path(
            "load-published/<int:job_id>/",
            self.admin_site.admin_view(require_GET(self.load_job_view)),
            name="annotation_campaign_load_published_job",
        )
        return [
            *[upload, upload_job, export, monitor, invite, load, load_job],
            *super().get_urls(),
        ]

    def invite_view(self, request, campaign_id):
        """Named annotators and their private links, one per criterion."""
        campaign = get_object_or_404(Campaign, pk=campaign_id)
        if not self.has_change_permission(request, campaign):
            raise PermissionDenied
        form = InvitationForm(request.POST or None)
        invited = []
        if request.method == "POST" and form.is_valid():
            root = site_url(request)  # the host the organiser reached the admin at
            criteria = list(campaign.criteria.order_by("name"))
            for name in form.cleaned_data["names"]:
                annotator = invite(campaign, name)
                links = [(c, root + invite_path(annotator, c.name)) for c in criteria]
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
        # Scores off the scale: on the page, not in the section it fetches again.
        whole = (
            {}
            if part
            else {
                "off_scale": off_scale_by_annotator(campaign),
                "scale_rules": scale_rules(list(campaign.criteria.order_by("name"))),
            }
        )
        return self._campaign_page(
            request,
            campaign,
            "_monitor_progress.html" if part else "monitor.html",
            f"Live monitor: {campaign}",
            rows=rows,
            empty_outputs=None if part else empty_outputs(campaign),
            asked_elsewhere=asked_on_other_pages(campaign),
            chart_height=CHART_HEIGHT,
            bar_width=BAR_WIDTH,
            refresh_seconds=MONITOR_REFRESH_SECONDS,
            **whole,
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

    @accepts_upload
    def upload_view(self, request, campaign_id):
        return admin_uploads.upload_view(self, request, campaign_id)

    def upload_job_view(self, request, campaign_id, job_id):
        return admin_uploads.upload_job_view(self, request, campaign_id, job_id)

    @accepts_upload
    def load_view(self, request):
        return admin_published.load_view(self, request)

    def load_job_view(self, request, job_id):
        return admin_published.load_job_view(self, request, job_id)

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


def export_response(campaign: Campaign, data: dict) -> StreamingHttpResponse:
    criterion = data["criterion"]
    chunks = export(campaign, data["file_format"], criterion)
    content_type, suffix = DOWNLOADS[data["file_format"]]
    name = f"{campaign.slug}-{criterion.name if criterion else 'all'}-{suffix}"
    response = StreamingHttpResponse(chunks, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@admin.register(Item)
class ItemAdmin(CampaignObjectAdmin, RecountAfterEdits):
    fixed_on_change = ("campaign",)
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
class SystemAdmin(CampaignObjectAdmin, RecountAfterEdits):
    fixed_on_change = ("campaign",)
    recorded_counting_fields = ("is_active",)
    list_display = [
        "name",
        "label",
        "campaign",
        "architecture",
        "is_active",
        "output_count",
        "empty_count",
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
            .annotate(
                n_outputs=count_of(Output.objects.all(), "system"),
                n_empty=count_of(Output.objects.empty(), "system"),
            )
        )

    @admin.display(description="outputs", ordering="n_outputs")
    def output_count(self, system):
        return system.n_outputs

    @admin.display(description="empty outputs", ordering="n_empty")
    def empty_count(self, system):
        return system.n_empty

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


class EmptyOutputFilter(admin.SimpleListFilter):
    """Outputs without text (the system produced none): kept, and shown to annotators as
    such; the organiser finds them here."""

    title = "empty output"
    parameter_name = "empty"

    def lookups(self, request, model_admin):
        return [("yes", "Empty (no text)"), ("no", "With text")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.empty()
        if self.value() == "no":
            return queryset.exclude(text="")
        return queryset


@admin.register(Output)
class OutputAdmin(CampaignObjectAdmin, RecountAfterEdits):
    # Counting every row for the 'N total' line costs what the page must not.
    show_full_result_count = False
    campaign_lookup = "item__campaign"
    fixed_on_change = ("item", "system")
    list_display = ["id", "system", "item", "origin", "text", "is_empty", "created_at"]
    list_filter = ["origin", EmptyOutputFilter, "system__campaign", "system"]
    search_fields = ["text", "item__external_id", "system__name"]
    list_select_related = ["system", "item"]
    raw_id_fields = ["item", "system"]
    # The model's ordering (item, system) sorts by the related rows' own orderings, a join
    # and a sort of every output; by their ids it is the (item, system) index, read in order.
    ordering = ["item_id", "system_id"]

    @admin.display(description="empty output", boolean=True)
    def is_empty(self, output):
        return not output.text


@admin.register(DataFile)
class DataFileAdmin(CampaignObjectAdmin, AnnotationAdmin):
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
