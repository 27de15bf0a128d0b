"""What every annotation admin shares: checked list filters, counts by subquery, and the
one door for deletions and edits that change what rankings count (removal.py)."""

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import BadRequest
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from .models import CampaignCriterion, criterion_label
from .permissions import Action, may
from .removal import delete_counted_rows


def count_of(rows: QuerySet, outer: str):
    """The number of `rows` whose `outer` field is the outer row, as a subquery: each count
    reads its own index instead of one join of every relation counted (which multiplied
    items by systems by HITs, 43.8 million rows for E2E's campaign)."""
    counted = (
        rows.filter(**{outer: OuterRef("pk")}).order_by().values(outer).annotate(n=Count("pk"))
    )
    return Coalesce(Subquery(counted.values("n")), 0)


def criterion_filter(path: str) -> type[admin.SimpleListFilter]:
    """A list filter by the criterion's name, `path` from the listed model to it (with the
    campaign's filter, one criterion): one query for the names, whatever the campaign's
    size (a filter of the criterion rows themselves would read each one's campaign)."""

    class ByCriterion(admin.SimpleListFilter):
        title = "criterion"
        parameter_name = "criterion"

        def lookups(self, request, model_admin):
            names = CampaignCriterion.objects.order_by("name").values_list("name", flat=True)
            return [(name, criterion_label(name)) for name in names.distinct()]

        def queryset(self, request, queryset):
            return queryset.filter(**{path: self.value()}) if self.value() else queryset

    return ByCriterion


class ListFromTheAddressBar(admin.ModelAdmin):
    """A list's filters and search come from the address bar: a value the database cannot
    take (a NUL byte, which PostgreSQL refuses in a string) or a filter that does not fit
    its field is a bad request (400), not a server error or a silent redirect. Every app's
    admins use it (ranking's and generation's too)."""

    def changelist_view(self, request, extra_context=None):
        if any("\x00" in key + value for key, value in request.GET.items()):
            raise BadRequest("A filter or search holds a NUL character.")
        return super().changelist_view(request, extra_context)

    def get_changelist_instance(self, request):
        try:
            return super().get_changelist_instance(request)
        except IncorrectLookupParameters as error:
            raise BadRequest(f"Invalid filter: {error}") from error


class CampaignObjectAdmin(ListFromTheAddressBar):
    """The admin of a campaign's objects (its items, annotators, judges, hosted systems,
    webhooks, Prolific hook, bonuses, API tokens, jobs and runs): each page asks for the
    campaign's permission as well as the model's, as the campaign's own pages do
    (permissions.py): to see one, the permission to view campaigns; to add, change or
    delete one, the permission to change them (`edit_needs`). Without it, a permission on
    webhooks showed their secrets, and one to add them made a webhook that sent out a
    campaign whose results were 403 to its maker (issue 39). tests/evalsite/test_urls.py
    walks every page of these admins to hold them to it."""

    edit_needs: Action = "change"

    def has_view_permission(self, request, obj=None):
        return may(request.user, "view") and super().has_view_permission(request, obj)

    def has_add_permission(self, request):
        return may(request.user, self.edit_needs) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None):
        allowed = super().has_change_permission(request, obj)
        return may(request.user, self.edit_needs) and allowed

    def has_delete_permission(self, request, obj=None):
        allowed = super().has_delete_permission(request, obj)
        return may(request.user, self.edit_needs) and allowed


class AnnotationAdmin(ListFromTheAddressBar):
    # Fields whose change on the change page save_model records as a change of counted
    # judgments (tests/annotation/test_admin_counting.py checks that every field which
    # changes counting is read-only or named here).
    recorded_counting_fields: tuple[str, ...] = ()


class ReadOnlyOnChange(AnnotationAdmin):
    """A row's place (its campaign, its item, its system...) is chosen when it is made, not
    moved afterwards: moving it would change what other rows' judgments count for."""

    fixed_on_change: tuple[str, ...] = ()

    def get_readonly_fields(self, request, obj=None):
        fixed = self.fixed_on_change if obj is not None else ()
        return [*super().get_readonly_fields(request, obj), *fixed]


class DeletesThroughRemoval(ReadOnlyOnChange):
    """Deleting these rows may take judgments, or assignments the hand-out balances on,
    with them: one row or many, the deletion records the change (removal.py)."""

    campaign_lookup = "campaign"

    def delete_model(self, request, obj):
        delete_counted_rows(type(obj).objects.filter(pk=obj.pk), self.campaign_lookup)

    def delete_queryset(self, request, queryset):
        delete_counted_rows(queryset, self.campaign_lookup)


class RecountAfterEdits(DeletesThroughRemoval):
    """Admin edits of what the hand-out counts (items, systems, outputs, HITs, assignments,
    a campaign's HIT size) are rare and may change anything: the next hand-out in the
    campaign counts again from the rows."""

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        self._recount(type(obj).objects.filter(pk=obj.pk))

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        self._recount(type(form.instance).objects.filter(pk=form.instance.pk))

    def _recount(self, queryset) -> None:
        campaigns = queryset.values_list(self.campaign_lookup, flat=True).distinct()
        CampaignCriterion.objects.filter(campaign__in=campaigns).record_pool_change(recount=True)
