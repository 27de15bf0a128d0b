"""What every annotation admin shares: checked list filters, counts by subquery, and the
one door for deletions and edits that change what rankings count (removal.py)."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from django.contrib import admin
from django.contrib.admin import widgets
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.auth import get_permission_codename
from django.core.exceptions import BadRequest
from django.db import models
from django.db.models import Count, ForeignObjectRel, OuterRef, QuerySet, Subquery
from django.db.models.deletion import Collector, ProtectedError, get_candidate_relations_to_delete
from django.db.models.functions import Coalesce
from django.utils.text import capfirst

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


# A URL typed without a scheme gets https, as Django 6 will give it (until then forms give
# http, with a deprecation warning): where crowd workers are sent next, webhook endpoints.
HTTPS_URL_FIELDS: Mapping[type[models.Field], Mapping[str, Any]] = {
    models.URLField: {"widget": widgets.AdminURLFieldWidget, "assume_scheme": "https"},
}


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


def may_delete_kind(request, admin_site: admin.AdminSite, model: type[models.Model]) -> bool:
    """Whether the user may delete the rows of `model` that a deletion takes with it: the
    model's delete permission where the admin shows the model, as Django asks, but not
    that admin's has_delete_permission, which some refuse to every hand-made deletion (a
    ranking's measured agreement per annotator): nobody could delete the rows such records
    rest on then, a superuser included (an annotator, issue 39)."""
    if model not in admin_site._registry:
        return True
    codename = get_permission_codename("delete", model._meta)
    return request.user.has_perm(f"{model._meta.app_label}.{codename}")


# How far deletions cascade (the project's longest chain, a campaign to an error span, is
# 4), and how many of the rows chosen the confirmation names.
MAX_CASCADE = 6
SHOWN_NAMES = 20


@dataclass
class Deletion:
    """What deleting some rows does: the rows of each kind it takes (`taken`, the rows
    themselves among them, each kind as one query: subqueries, no rows read) and the rows
    that refuse it (`refused`: a bonus sent to Prolific, the record of money paid, protects
    its annotator and campaign)."""

    taken: dict[type[models.Model], QuerySet] = field(default_factory=dict)
    refused: list[models.Model] = field(default_factory=list)

    def refusals(self) -> list[str]:
        """The refusing rows, named as Django's delete page lists protected rows (the page
        then deletes nothing)."""
        return [f"{capfirst(row._meta.verbose_name)}: {row}" for row in self.refused]


# The on_delete behaviours that never refuse a deletion and need not be asked what they
# take; any other (PROTECT, or another app's function, such as the bonus ledger's
# `keep_sent_bonuses`) is asked as Django's deletion asks it.
NEVER_REFUSING = (models.CASCADE, models.SET_NULL, models.SET_DEFAULT, models.DO_NOTHING)


def plan_deletion(rows: QuerySet) -> Deletion:
    """What deleting `rows` takes and what refuses it, following the relations Django's
    deletion follows; a query or two for each relation that must be asked, whatever the
    number of rows."""
    deletion = Deletion()
    follow(rows, deletion, depth=0)
    return deletion


def follow(rows: QuerySet, deletion: Deletion, depth: int) -> None:
    model = rows.model
    # A kind reached twice (a HIT's judgments, by its assignments and its slots).
    taken = deletion.taken
    taken[model] = taken[model] | rows if model in taken else rows
    if depth >= MAX_CASCADE:
        return
    for relation in deletion_relations(model):
        if relation.on_delete is models.CASCADE:
            follow(rows_pointing(relation, rows), deletion, depth + 1)
        elif relation.on_delete not in NEVER_REFUSING:
            for more in asked(relation, rows, deletion.refused):
                follow(more, deletion, depth + 1)


def asked(
    relation: ForeignObjectRel, rows: QuerySet, refused: list[models.Model]
) -> list[QuerySet]:
    """The rows pointing at `rows` that `relation`'s own on_delete deletes, asked of a
    collector as Django's deletion asks it (of rows there are); those it protects are added
    to `refused`."""
    pointing = rows_pointing(relation, rows)
    if not pointing.exists():
        return []
    collector = Collector(using=pointing.db)
    try:
        relation.on_delete(collector, relation.field, pointing, pointing.db)
    except ProtectedError as error:
        refused += [row for row in error.protected_objects if row not in refused]
        return []
    model = pointing.model
    deleted = [found for found in collector.fast_deletes if found.model is model]
    if collector.data.get(model):
        deleted.append(model._base_manager.filter(pk__in=[row.pk for row in collector.data[model]]))
    return deleted


def deletion_relations(model: type[models.Model]) -> list[ForeignObjectRel]:
    """The relations Django's deletion follows from `model`'s rows: the foreign keys and
    one-to-ones pointing at them, those named "+" included (an annotator's agreement rows)."""
    relations = get_candidate_relations_to_delete(model._meta)
    return [cast(ForeignObjectRel, relation) for relation in relations]


def rows_pointing(relation: ForeignObjectRel, rows: QuerySet) -> QuerySet:
    """The rows of `relation`'s model that point at `rows`, as a subquery: no rows read."""
    model = cast(type[models.Model], relation.related_model)
    return model._base_manager.filter(**{f"{relation.field.name}__in": rows})


def kind_of(model: type[models.Model], n: int) -> str:
    return str(model._meta.verbose_name if n == 1 else model._meta.verbose_name_plural)


class DeletesThroughRemoval(ReadOnlyOnChange):
    """Deleting these rows may take judgments, or assignments the hand-out balances on,
    with them: one row or many, the deletion records the change (removal.py)."""

    campaign_lookup = "campaign"

    def get_deleted_objects(self, objs, request):
        """What deleting `objs` deletes, as a count per kind (Django lists every row, an
        annotator's thousands of judgments included), each kind's permission asked by
        `may_delete_kind`."""
        chosen = list(objs)
        rows = self.model._base_manager.filter(pk__in=[obj.pk for obj in chosen])
        deletion = plan_deletion(rows)
        counts = {model: found.count() for model, found in deletion.taken.items()}
        kinds = {model: kind_of(model, n) for model, n in counts.items() if n}
        names = ", ".join(str(obj) for obj in chosen[:SHOWN_NAMES])
        if len(chosen) > SHOWN_NAMES:
            names += f" and {len(chosen) - SHOWN_NAMES:,} more"
        taken = [
            f"{counts[model]:,} {kind}" for model, kind in kinds.items() if model is not self.model
        ]
        totals = {str(model._meta.verbose_name_plural): counts[model] for model in kinds}
        perms_needed = {
            str(model._meta.verbose_name)
            for model in kinds
            if not may_delete_kind(request, self.admin_site, model)
        }
        return [names, taken], totals, perms_needed, deletion.refusals()

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
