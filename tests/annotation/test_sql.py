"""annotation/handout/sql.py: the hot statements written in SQL read and write exactly what the ORM
would, on SQLite and on PostgreSQL (the suite's DATABASE_URL)."""

from datetime import timedelta

import pytest
from django.forms.models import model_to_dict
from django.utils import timezone

from annotation.handout import sql
from annotation.handout.assignment import next_assignment
from annotation.models import (
    QUALITY,
    Assignment,
    Campaign,
    CampaignCriterion,
    Hit,
    HitOutput,
    Judgment,
)
from tests.factories import make_annotator, make_campaign, make_system_set

pytestmark = pytest.mark.django_db


def fields_of(instance) -> dict:
    """Every concrete field's value, as the ORM reads it back."""
    return {
        field.attname: getattr(instance, field.attname) for field in instance._meta.concrete_fields
    }


def given_out():
    campaign, _, _ = make_system_set(make_campaign(attention_check_every=1), systems=4, items=3)
    criterion = campaign.criteria.get(name=QUALITY)
    criterion.estimates = {"1": [0.5, 0.9, 3]}
    criterion.save()
    annotator = make_annotator(campaign, study_data={"study_id": "s-1", "note": "é <b>"})
    return campaign, criterion, annotator, next_assignment(annotator, criterion)


def test_the_criterion_and_its_campaign_come_back_as_the_orm_reads_them():
    campaign, criterion, annotator, _ = given_out()
    found, annotator_id = sql.criterion_by_slug(campaign.slug, "quality", annotators=[annotator.pk])
    expected = CampaignCriterion.objects.get(pk=criterion.pk)
    assert fields_of(found) == fields_of(expected)  # JSON, datetimes and all
    assert fields_of(found.campaign) == fields_of(Campaign.objects.get(pk=campaign.pk))
    assert annotator_id == annotator.pk
    other = make_annotator(make_campaign())  # remembered, but of another campaign
    assert sql.criterion_by_slug(campaign.slug, "quality", annotators=[other.pk])[1] is None
    assert sql.criterion_by_slug(campaign.slug, "nonsense") == (None, None)
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.DRAFT)
    assert sql.criterion_by_slug(campaign.slug, "quality") == (None, None)


def test_an_assignment_comes_back_with_its_annotator_hit_and_item_only_for_its_annotator():
    campaign, criterion, annotator, assignment = given_out()
    found, coverage_required, shows_input = sql.annotators_assignment(
        assignment.pk, [annotator.pk], campaign.slug, "quality"
    )
    expected = Assignment.objects.select_related("annotator", "hit__item").get(pk=assignment.pk)
    assert fields_of(found) == fields_of(expected)
    assert fields_of(found.annotator) == fields_of(expected.annotator)
    assert fields_of(found.hit) == fields_of(expected.hit)
    assert fields_of(found.hit.item) == fields_of(expected.hit.item)
    assert coverage_required is criterion.coverage_required is True
    assert shows_input is criterion.shows_input is True
    someone_else = make_annotator(campaign)
    assert (
        sql.annotators_assignment(assignment.pk, [someone_else.pk], campaign.slug, "quality")[0]
        is None
    )
    assert sql.annotators_assignment(assignment.pk, [], campaign.slug, "quality")[0] is None
    wrong_criterion = sql.annotators_assignment(
        assignment.pk, [annotator.pk], campaign.slug, "naturalness"
    )
    assert wrong_criterion[0] is None


def test_slots_come_back_in_order_with_outputs_and_the_check_among_them():
    _, _, _, assignment = given_out()
    slots = sql.hit_slots(assignment.hit)
    expected = list(HitOutput.objects.filter(hit=assignment.hit).order_by("position"))
    assert [fields_of(s) for s in slots] == [fields_of(s) for s in expected]
    assert [fields_of(s.output) for s in slots] == [fields_of(s.output) for s in expected]
    assert sum(slot.is_attention_check for slot in slots) == 1  # attention_check_every=1


def test_insert_writes_what_bulk_create_would_and_sets_the_keys():
    campaign, criterion, annotator, assignment = given_out()
    now = timezone.now()
    hit = Hit(campaign=campaign, criterion=criterion, item=assignment.hit.item)
    sql.insert([hit])
    new = Assignment(hit=hit, annotator=annotator, started_at=now, expires_at=now + timedelta(1))
    sql.insert([new])
    slots = list(assignment.hit.slots.order_by("position"))
    judgments = [
        Judgment(assignment=assignment, slot=slot, criterion=criterion, score=50 + n)
        for n, slot in enumerate(slots)
    ]
    sql.insert(judgments)
    assert Hit.objects.get(pk=hit.pk).created_at is not None  # auto_now_add filled in
    stored = Assignment.objects.get(pk=new.pk)
    assert (stored.status, stored.flag, stored.submission_key) == ("assigned", "", "")
    assert stored.expires_at == now + timedelta(1)
    assert list(
        Judgment.objects.filter(assignment=assignment)
        .order_by("slot__position")
        .values_list("pk", "score")
    ) == [(j.pk, 50 + n) for n, j in enumerate(judgments)]


def test_an_assignment_is_marked_submitted_only_if_what_was_read_still_holds():
    _, _, annotator, assignment = given_out()
    assignment.submitted_at = timezone.now()
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.EXPIRED)
    assert not sql.mark_submitted(assignment, "k1", "")  # read "assigned": changed since
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.ASSIGNED)
    type(annotator).objects.filter(pk=annotator.pk).update(is_excluded=True)
    assert not sql.mark_submitted(assignment, "k1", "")  # read "not excluded": changed since
    type(annotator).objects.filter(pk=annotator.pk).update(is_excluded=False)
    assert sql.mark_submitted(assignment, "k1", "")
    stored = Assignment.objects.get(pk=assignment.pk)
    assert (stored.status, stored.submission_key) == ("submitted", "k1")
    assert stored.submitted_at == assignment.submitted_at
    assert model_to_dict(stored)["flag"] == ""
