"""annotation/handout/flow.py: what the annotator's pages do under the criterion's lock,
each returning a typed result (or None: nothing there for this visitor)."""

import pytest

from annotation.handout import flow
from annotation.handout.shown import Answer
from annotation.handout.submission import Outcome
from annotation.models import QUALITY, Assignment, Judgment
from tests.factories import make_annotator, make_campaign, make_system_set

pytestmark = pytest.mark.django_db


def campaign_with_annotator(**fields):
    campaign, _, _ = make_system_set(make_campaign(min_seconds_per_hit=0, **fields))
    return campaign, make_annotator(campaign)


def answer_all(posted: flow.PostedHit) -> dict[int, Answer]:
    return {shown.key: Answer(50, reflects_perfectly=True) for shown in posted.shown}


def test_start_hands_out_the_annotators_first_hit():
    campaign, annotator = campaign_with_annotator()
    started = flow.start(campaign.slug, QUALITY, [annotator.pk])
    assert started is not None and not started.needs_check
    assert started.criterion.campaign == campaign
    assignment = Assignment.objects.get(annotator=annotator)
    assert started.assignment == assignment
    assert assignment.status == Assignment.Status.ASSIGNED


def test_start_for_an_annotator_of_another_campaign_is_none():
    campaign, _ = campaign_with_annotator()
    stranger = make_annotator()
    assert flow.start(campaign.slug, QUALITY, [stranger.pk]) is None
    assert flow.start("no-such-campaign", QUALITY, [stranger.pk]) is None
    assert not Assignment.objects.exists()


def test_start_sends_to_the_comprehension_check_first():
    campaign, annotator = campaign_with_annotator()
    campaign.criteria.filter(name=QUALITY).update(comprehension_check=True)
    started = flow.start(campaign.slug, QUALITY, [annotator.pk])
    assert started is not None and started.needs_check and started.assignment is None
    assert not Assignment.objects.exists()


def test_submit_saves_the_answers_and_hands_out_the_next_hit():
    campaign, annotator = campaign_with_annotator()
    first = flow.start(campaign.slug, QUALITY, [annotator.pk]).assignment
    posted = flow.posted_hit(first.pk, [annotator.pk], campaign.slug, QUALITY)
    assert posted is not None and not posted.submitted
    submitted = flow.submit(posted, campaign.slug, QUALITY, answer_all(posted), "key-1")
    assert submitted is not None
    assert (submitted.outcome, submitted.too_fast) == (Outcome.SAVED, False)
    first.refresh_from_db()
    assert (first.status, first.submission_key) == (Assignment.Status.SUBMITTED, "key-1")
    assert Judgment.objects.filter(assignment=first).count() == len(posted.shown)
    assert submitted.following is not None and submitted.following.pk != first.pk
    assert submitted.following.annotator_id == annotator.pk


def test_submit_of_a_page_already_submitted_saves_nothing_more():
    campaign, annotator = campaign_with_annotator()
    first = flow.start(campaign.slug, QUALITY, [annotator.pk]).assignment
    posted = flow.posted_hit(first.pk, [annotator.pk], campaign.slug, QUALITY)
    flow.submit(posted, campaign.slug, QUALITY, answer_all(posted), "key-1")
    again = flow.posted_hit(first.pk, [annotator.pk], campaign.slug, QUALITY)
    assert again is not None and again.submitted
    repeated = flow.submit(again, campaign.slug, QUALITY, {}, "key-1")
    other = flow.submit(again, campaign.slug, QUALITY, {}, "")
    assert (repeated.outcome, other.outcome) == (Outcome.REPEATED, Outcome.ALREADY_SUBMITTED)
    assert Judgment.objects.filter(assignment=first).count() == len(posted.shown)
    assert Assignment.objects.filter(annotator=annotator).count() == 2


def test_posted_hit_of_another_annotator_is_none():
    campaign, annotator = campaign_with_annotator()
    first = flow.start(campaign.slug, QUALITY, [annotator.pk]).assignment
    other = make_annotator(campaign)
    assert flow.posted_hit(first.pk, [other.pk], campaign.slug, QUALITY) is None
    assert flow.own_assignment(first.pk, [other.pk], campaign.slug, QUALITY) is None
    assert flow.own_assignment(first.pk, [annotator.pk], campaign.slug, QUALITY) == first


def test_finish_hands_back_the_open_hit():
    campaign, annotator = campaign_with_annotator()
    first = flow.start(campaign.slug, QUALITY, [annotator.pk]).assignment
    criterion = flow.finish(campaign.slug, QUALITY, [annotator.pk])
    assert criterion == campaign.criteria.get(name=QUALITY)
    first.refresh_from_db()
    assert first.status == Assignment.Status.EXPIRED
    assert flow.finish(campaign.slug, QUALITY, [make_annotator().pk]) is None
