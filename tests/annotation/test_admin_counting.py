"""Every admin path that changes what rankings count goes through the domain's functions:
the criterion's judgments version moves past its last ranking's (so the sweep queues a new
one, closed campaigns included) and the kept hand-out loads stay right. Fields that would
change counting without them are read-only; the guard at the end fails when one is not."""

import re
from datetime import timedelta

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from annotation.handout.loads import recount_loads, sync_pool
from annotation.models import (
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    Hit,
    HitOutput,
    Item,
    Judgment,
    Output,
    System,
)
from ranking.agreement.models import AnnotatorAgreement
from ranking.models import RankingRun
from ranking.service import fitting_protocols, queue_due_rankings
from tests.annotation.admin_forms import change_form_data
from tests.factories import make_campaign, make_judged_hit, make_system_set
from tests.handout import kept_loads
from tests.world import logged_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(db):
    """A closed campaign of 3 systems and 4 items; two annotators judged a HIT each, the
    second one's flagged; the loads counted and every protocol ranked at this version."""
    campaign = make_campaign(outputs_per_hit=3, status=Campaign.Status.CLOSED)
    make_system_set(campaign, systems=3, items=4)
    items = list(campaign.items.order_by("id"))
    first = make_judged_hit(list(items[0].outputs.all()), [100, 50, 20])
    second = make_judged_hit(list(items[1].outputs.all()), [10, 60, 30])
    Assignment.objects.filter(pk=second.pk).update(flag=Assignment.Flag.TOO_FAST)
    criterion = sync_pool(campaign.criteria.get(name="quality"))
    ranked_now(criterion)
    return criterion, first, second


def ranked_now(criterion: CampaignCriterion) -> None:
    """Finished runs of every protocol at the criterion's version, queued long ago."""
    criterion.refresh_from_db()
    for protocol in fitting_protocols(criterion):
        RankingRun.objects.create(
            campaign=criterion.campaign,
            criterion=criterion,
            protocol=protocol,
            status=RankingRun.Status.DONE,
            judgments_version=criterion.judgments_version,
            queued_at=timezone.now() - timedelta(hours=1),
        )


def assert_recorded(criterion: CampaignCriterion) -> None:
    """The change was recorded: the version moved past the last run's, the sweep queues a
    ranking of every protocol, and the loads the next hand-out uses are the true ones."""
    ranked_at = criterion.judgments_version
    criterion.refresh_from_db()
    assert criterion.judgments_version > ranked_at
    queued = {(r.criterion.name, r.protocol) for r in queue_due_rankings()}
    assert {("quality", protocol) for protocol in fitting_protocols(criterion)} <= queued
    assert_loads_right(criterion)


def assert_loads_right(criterion: CampaignCriterion) -> None:
    criterion = sync_pool(criterion)  # what the next hand-out does first
    kept = kept_loads(criterion)
    recount_loads(criterion)
    assert kept == kept_loads(criterion)


def change_url(model: str, pk: int) -> str:
    return reverse(f"admin:annotation_{model}_change", args=[pk])


def save_change_page(person, model: str, pk: int, **changes):
    """Open the change page of a row, change some fields, save."""
    page = person.get(change_url(model, pk))
    data = {**change_form_data(page), **changes}
    data = {name: value for name, value in data.items() if value is not None}
    return person.submit(page, data, action=change_url(model, pk))


# Exclusion and flags -------------------------------------------------------------------------


def test_admin_annotator_page_excludes_through_the_domain(organiser, judged):
    criterion, first, _ = judged
    response = save_change_page(organiser, "annotator", first.annotator_id, is_excluded="on")
    assert response.status_code == 302
    assert Annotator.objects.get(pk=first.annotator_id).is_excluded
    assert_recorded(criterion)
    assert kept_loads(criterion)["items"] == {}  # the flagged HIT never counted either


def test_admin_annotator_page_includes_again_through_the_domain(organiser, judged):
    criterion, first, _ = judged
    Annotator.objects.filter(pk=first.annotator_id).update(is_excluded=True)
    recount_loads(criterion)
    response = save_change_page(organiser, "annotator", first.annotator_id, is_excluded=None)
    assert response.status_code == 302
    assert not Annotator.objects.get(pk=first.annotator_id).is_excluded
    assert_recorded(criterion)
    assert kept_loads(criterion)["items"] == {first.hit.item_id: 1}


def test_admin_annotator_page_saves_other_fields_without_a_ranking(organiser, judged):
    criterion, first, _ = judged
    response = save_change_page(organiser, "annotator", first.annotator_id, name="Ann")
    assert response.status_code == 302
    assert Annotator.objects.get(pk=first.annotator_id).name == "Ann"
    version = criterion.judgments_version
    criterion.refresh_from_db()
    assert criterion.judgments_version == version
    assert queue_due_rankings() == []


def test_admin_assignment_page_cannot_clear_a_flag(organiser, judged):
    criterion, _, second = judged
    page = organiser.get(change_url("assignment", second.pk))
    assert "flag" not in change_form_data(page)
    response = save_change_page(organiser, "assignment", second.pk, flag="", status="expired")
    assert response.status_code == 302, response.context["adminform"].form.errors
    second.refresh_from_db()
    assert (second.flag, second.status) == (Assignment.Flag.TOO_FAST, Assignment.Status.SUBMITTED)
    assert_loads_right(criterion)


def test_admin_clear_flag_action_counts_the_hit(organiser, judged):
    criterion, _, second = judged
    page = organiser.get(reverse("admin:annotation_assignment_changelist"))
    chosen = {"action": "clear_flag", "_selected_action": [second.pk]}
    organiser.submit(page, chosen, action=reverse("admin:annotation_assignment_changelist"))
    second.refresh_from_db()
    assert second.flag == Assignment.Flag.NONE
    assert_recorded(criterion)
    assert kept_loads(criterion)["items"] == {second.hit.item_id: 1, judged[1].hit.item_id: 1}


def test_admin_exclude_action_records_the_change(organiser, judged):
    criterion, first, _ = judged
    page = organiser.get(reverse("admin:annotation_annotator_changelist"))
    chosen = {"action": "exclude_from_rankings", "_selected_action": [first.annotator_id]}
    organiser.submit(page, chosen, action=reverse("admin:annotation_annotator_changelist"))
    assert Annotator.objects.get(pk=first.annotator_id).is_excluded
    assert_recorded(criterion)


@pytest.fixture
def judged_da(judged):
    """`judged` with quality a direct-assessment page that also asks naturalness: each
    judged HIT holds a naturalness judgment per slot too; both criteria ranked now."""
    quality, first, second = judged
    naturalness = quality.campaign.criteria.get(name="naturalness")
    CampaignCriterion.objects.filter(pk=naturalness.pk).update(form="da")
    CampaignCriterion.objects.filter(pk=quality.pk).update(
        form="da", settings={"also_asks": ["naturalness"]}
    )
    for assignment in (first, second):
        for slot in assignment.hit.slots.all():
            Judgment.objects.create(
                assignment=assignment, slot=slot, criterion=naturalness, score=50
            )
    ranked_now(naturalness)
    quality.refresh_from_db()
    naturalness.refresh_from_db()
    return quality, naturalness, first, second


def assert_further_recorded(naturalness: CampaignCriterion) -> None:
    """The change of the further criterion, asked on quality's pages, was recorded too."""
    ranked_at = naturalness.judgments_version
    naturalness.refresh_from_db()
    assert naturalness.judgments_version > ranked_at
    assert (
        not RankingRun.objects.for_criterion(naturalness)
        .filter(judgments_version=naturalness.judgments_version)
        .exists()
    )


def test_admin_excluding_an_annotator_records_every_criterion_their_pages_judged(
    organiser, judged_da
):
    quality, naturalness, first, _ = judged_da
    response = save_change_page(organiser, "annotator", first.annotator_id, is_excluded="on")
    assert response.status_code == 302
    assert_recorded(quality)
    assert_further_recorded(naturalness)
    assert Judgment.objects.counted().for_criterion(naturalness).count() == 0


def test_admin_clearing_a_flag_records_every_criterion_the_page_judged(organiser, judged_da):
    quality, naturalness, _, second = judged_da
    changelist = reverse("admin:annotation_assignment_changelist")
    chosen = {"action": "clear_flag", "_selected_action": [second.pk]}
    organiser.submit(organiser.get(changelist), chosen, action=changelist)
    assert_recorded(quality)
    assert_further_recorded(naturalness)
    assert Judgment.objects.counted().for_criterion(naturalness).count() == 6


def test_admin_system_page_switching_a_system_off_records_the_change(organiser, judged):
    criterion, first, _ = judged
    system = first.hit.slots.first().output.system
    response = save_change_page(organiser, "system", system.pk, is_active=None)
    assert response.status_code == 302, response.context["adminform"].form.errors
    system.refresh_from_db()
    assert not system.is_active
    assert_recorded(criterion)
    assert criterion.hit_size == 2  # two active systems left


# Deletions -----------------------------------------------------------------------------------

# From the first judged assignment to the row deleted, and what is left of its judgments.
DELETED = {
    "annotator": (lambda a: a.annotator, 3),
    "assignment": (lambda a: a, 3),
    "hit": (lambda a: a.hit, 3),
    "judgment": (lambda a: a.judgments.first(), 5),
    "item": (lambda a: a.hit.item, 3),
    "output": (lambda a: a.judgments.first().slot.output, 5),
    "system": (lambda a: a.judgments.first().slot.output.system, 4),
}


@pytest.mark.parametrize("model", DELETED)
def test_admin_deletion_records_the_change(organiser, judged, model):
    criterion, first, _ = judged
    row_of, judgments_left = DELETED[model]
    row = row_of(first)
    url = reverse(f"admin:annotation_{model}_delete", args=[row.pk])
    response = organiser.submit(organiser.get(url), {"post": "yes"}, action=url)
    assert response.status_code == 302
    assert not type(row).objects.filter(pk=row.pk).exists()
    assert Judgment.objects.count() == judgments_left
    assert_recorded(criterion)


def measured_agreement(criterion: CampaignCriterion, *assignments) -> None:
    """What a ranking run stores for each annotator it measured (ranking/agreement)."""
    run = RankingRun.objects.filter(criterion=criterion).first()
    for assignment in assignments:
        AnnotatorAgreement.objects.create(
            run=run, annotator=assignment.annotator, hits=1, flagged=0, shared_units=0,
            excluded=False,
        )  # fmt: skip


def test_admin_deletes_an_annotator_a_ranking_measured(organiser, judged):
    """Issue 39: the annotator agreement rows a ranking keeps, which its admin lets nobody
    delete by hand, stopped every deletion of an annotator, a superuser's included."""
    criterion, first, second = judged
    measured_agreement(criterion, first, second)
    url = reverse("admin:annotation_annotator_delete", args=[first.annotator_id])
    page = organiser.get(url)
    text = " ".join(re.sub(r"<[^>]+>", " ", page.content.decode()).split())
    assert "1 assignment" in text and "3 judgments" in text and "1 annotator agreement" in text
    response = organiser.submit(page, {"post": "yes"}, action=url)
    assert response.status_code == 302
    assert not Annotator.objects.filter(pk=first.annotator_id).exists()
    assert list(AnnotatorAgreement.objects.values_list("annotator", flat=True)) == [
        second.annotator_id
    ]
    assert Judgment.objects.count() == 3  # the other annotator's
    assert_recorded(criterion)


def test_admin_annotator_deletion_asks_the_permission_of_each_kind_it_takes(judged):
    """Staff who may delete annotators but not the agreement rows they take: refused, as
    Django refuses a deletion that takes rows one may not delete."""
    criterion, first, _ = judged
    measured_agreement(criterion, first)
    deleter = logged_in("deleter", is_staff=True)
    wanted = ["change_campaign", "view_annotator", "delete_annotator", "delete_assignment",
              "delete_judgment"]  # fmt: skip
    deleter.user.user_permissions.add(*Permission.objects.filter(codename__in=wanted))
    url = reverse("admin:annotation_annotator_delete", args=[first.annotator_id])
    page = deleter.get(url)
    assert page.status_code == 200 and "annotator agreement" in page.content.decode()
    assert deleter.send("POST", url, {"post": "yes"}).status_code == 403
    assert Annotator.objects.filter(pk=first.annotator_id).exists()


def test_admin_bulk_deletion_records_the_change(organiser, judged):
    criterion, first, second = judged
    changelist = reverse("admin:annotation_annotator_changelist")
    measured_agreement(criterion, first, second)
    chosen = {
        "action": "delete_selected",
        "_selected_action": [first.annotator_id, second.annotator_id],
    }
    confirm = organiser.submit(organiser.get(changelist), chosen, action=changelist)
    organiser.submit(confirm, {**chosen, "post": "yes"}, action=changelist)
    assert not Annotator.objects.exists() and not Judgment.objects.exists()
    assert_recorded(criterion)


# The guard -----------------------------------------------------------------------------------

# Every editable field of the models rankings and loads are made of: those that change what
# is counted (or which system or item a judgment counts for), and the others. A new field
# fails test_every_field_of_what_rankings_count_is_classified until it is put in one.
COUNTING = {
    Annotator: {"is_excluded"},
    Assignment: {"hit", "annotator", "status", "flag"},
    Hit: {"campaign", "criterion", "item"},
    HitOutput: {"hit", "output", "position", "degraded_text"},
    Judgment: {"assignment", "slot", "criterion", "score"},
    System: {"campaign", "is_active"},
    Output: {"item", "system"},
    Item: {"campaign"},
    CampaignCriterion: {"campaign", "name", "form"},
}
NOT_COUNTING = {
    Annotator: {"campaign", "source", "external_id", "name", "token", "study_data"},
    Assignment: {"started_at", "expires_at", "submitted_at", "submission_key"},
    Hit: {"external_id", "composition"},
    HitOutput: set(),
    Judgment: {"adds_information", "misses_information", "reflects_perfectly"},
    System: {"name", "key", "label", "architecture", "description"},
    Output: {"text", "origin"},
    Item: {"external_id", "input_kind", "input_data", "input_key", "references"},
    CampaignCriterion: {
        "is_open",
        "question",
        "shows_input",
        "comprehension_check",
        "coverage_required",
        "composition",
        "balanced_share",
        "close_when_stable_for",
        "follow_up_url",
        "settings",
    },
}


def editable_fields(model) -> set[str]:
    return {
        field.name
        for field in model._meta.concrete_fields
        if field.editable and not field.primary_key and not getattr(field, "auto_now_add", False)
    }


def test_every_field_of_what_rankings_count_is_classified():
    for model, counting in COUNTING.items():
        assert editable_fields(model) == counting | NOT_COUNTING[model], model.__name__


def test_no_admin_edits_a_counting_field_without_recording_it(organiser, judged):
    """Every admin of the project (annotation's, and the other apps' admins and inlines of
    annotation's models): on a change page, a field that changes counting is read-only,
    or its admin names it among the fields its save_model records."""
    unrecorded, checked = counting_fields_edited_unrecorded(organiser.user)
    assert unrecorded == []
    assert set(COUNTING) <= checked


def test_the_guard_finds_a_counting_field_made_editable(organiser, judged, monkeypatch):
    assignments = admin.site._registry[Assignment]
    monkeypatch.setattr(assignments, "readonly_fields", ["hit", "annotator", "status"])
    monkeypatch.setattr(admin.site._registry[Annotator], "recorded_counting_fields", ())
    unrecorded, _ = counting_fields_edited_unrecorded(organiser.user)
    assert unrecorded == [("AnnotatorAdmin", "is_excluded"), ("AssignmentAdmin", "flag")]


def counting_fields_edited_unrecorded(user) -> tuple[list[tuple[str, str]], set]:
    """(admin or inline, field) for each counting field a change page lets a person edit
    without its save path recording it; and the models whose change pages were looked at."""
    request = RequestFactory().get("/")
    request.user = user
    unrecorded: list[tuple[str, str]] = []
    checked = set()
    for model, model_admin in admin.site._registry.items():
        obj = model.objects.first()
        if obj is None:
            assert model not in COUNTING, f"no {model.__name__} to check"
            continue
        name = type(model_admin).__name__
        recorded = set(getattr(model_admin, "recorded_counting_fields", ()))
        if model in COUNTING:
            unrecorded += [(name, f) for f in set(model_admin.list_editable) & COUNTING[model]]
            if model_admin.has_change_permission(request, obj):
                form = model_admin.get_form(request, obj, change=True)(instance=obj)
                edited = editable_in(form) & COUNTING[model]
                unrecorded += [(name, field) for field in sorted(edited - recorded)]
            checked.add(model)
        for inline in model_admin.get_inline_instances(request, obj):
            if inline.model in COUNTING:
                formset = inline.get_formset(request, obj)(instance=obj)
                for form in formset.initial_forms:
                    edited = editable_in(form, formset.fk.name) & COUNTING[inline.model]
                    unrecorded += [(type(inline).__name__, field) for field in sorted(edited)]
                checked.add(inline.model)
    return sorted(set(unrecorded)), checked


def editable_in(form, parent_link: str = "") -> set[str]:
    """The fields a person can change (an inline's link to its parent is the formset's)."""
    return {name for name, field in form.fields.items() if not field.disabled} - {parent_link}


def test_rows_that_only_the_hand_out_makes_cannot_be_added_in_the_admin(organiser):
    request = RequestFactory().get("/")
    request.user = organiser.user
    for model in (Assignment, Judgment):
        assert not admin.site._registry[model].has_add_permission(request)


def test_admin_criterion_row_keeps_its_criterion(organiser, judged):
    criterion, _, _ = judged
    campaign = criterion.campaign
    index = list(campaign.criteria.order_by("name")).index(criterion)
    changes = {f"criteria-{index}-criterion": "naturalness"}
    response = save_change_page(organiser, "campaign", campaign.pk, **changes)
    assert response.status_code == 302
    assert sorted(campaign.criteria.values_list("name", flat=True)) == [
        "naturalness",
        "quality",
    ]


def test_admin_deletion_outsider_deletes_nothing(non_staff, judged):
    _, first, _ = judged
    response = non_staff.send(
        "POST", reverse("admin:annotation_annotator_delete", args=[first.annotator_id])
    )
    assert response.status_code == 302 and "/admin/login/" in response.url
    assert Annotator.objects.filter(pk=first.annotator_id).exists()


def test_admin_criterion_with_hits_cannot_be_deleted(organiser, judged):
    criterion, _, _ = judged
    campaign = criterion.campaign
    index = list(campaign.criteria.order_by("name")).index(criterion)
    changes = {f"criteria-{index}-DELETE": "on"}
    response = save_change_page(organiser, "campaign", campaign.pk, **changes)
    assert response.status_code == 200
    assert "has HITs: untick" in response.content.decode()
    assert campaign.criteria.filter(pk=criterion.pk).exists()


def test_admin_criterion_without_hits_can_be_deleted(organiser, judged):
    campaign = judged[0].campaign
    naturalness = campaign.criteria.get(name="naturalness")
    index = list(campaign.criteria.order_by("name")).index(naturalness)
    changes = {f"criteria-{index}-DELETE": "on"}
    response = save_change_page(organiser, "campaign", campaign.pk, **changes)
    assert response.status_code == 302
    assert list(campaign.criteria.values_list("name", flat=True)) == ["quality"]
