"""The comprehension check after the instructions, through the annotator's pages."""

import re

import pytest
from django.urls import reverse

from annotation.models import QUALITY, Assignment, CampaignCriterion, Screening
from annotation.screening import WORKED_PAIRS, sentence_first
from tests.factories import make_campaign, make_system_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def checked_campaign():
    campaign = make_campaign(outputs_per_hit=3, min_seconds_per_hit=0)
    make_system_set(campaign, systems=3, items=4)
    CampaignCriterion.objects.filter(campaign=campaign).update(comprehension_check=True)
    return campaign


def url(name, campaign, *args):
    return reverse(f"annotation:{name}", args=[campaign.slug, QUALITY, *args])


def start(worker, campaign):
    """Press Start on the instructions page; where it leads."""
    return worker.submit(worker.get(url("entry", campaign))).url


def answer_check(worker, campaign, right: bool):
    """Score the worked pair: the sentence above its degraded copy if `right`."""
    page = worker.get(url("check", campaign))
    text = page.content.decode()
    pair = WORKED_PAIRS[QUALITY]
    assert pair.sentence in text and pair.degraded in text
    sentence_is_a = sentence_first(worker.annotator.pk)
    assert text.index(pair.sentence) < text.index(pair.degraded) if sentence_is_a else True
    high, low = ("120", "20") if right else ("20", "120")
    scores = (
        {"score_a": high, "score_b": low} if sentence_is_a else {"score_a": low, "score_b": high}
    )
    return worker.submit(page, scores)


def code_on(page) -> str:
    return re.search(r'id="completion-code">([^<]+)<', page.content.decode()).group(1)


def test_start_leads_to_the_check_first_and_passing_it_to_a_hit(worker, checked_campaign):
    worker.enter(checked_campaign, pid="careful")
    assert start(worker, checked_campaign) == url("check", checked_campaign)
    assert not Assignment.objects.exists()
    response = answer_check(worker, checked_campaign, right=True)
    assert response.url == url("check", checked_campaign)
    hit_page = worker.get(response.url)
    assignment = Assignment.objects.get(annotator=worker.annotator)
    assert hit_page.url == url("hit", checked_campaign, assignment.pk)
    screening = Screening.objects.get(annotator=worker.annotator)
    assert (screening.attempts, screening.passed) == (1, True)
    assert worker.get(url("entry", checked_campaign)).url == hit_page.url  # no second check


def test_a_second_attempt_may_pass(worker, checked_campaign):
    worker.enter(checked_campaign, pid="second-go")
    start(worker, checked_campaign)
    answer_check(worker, checked_campaign, right=False)
    retry = worker.get(url("check", checked_campaign)).content.decode()
    assert "one more try" in retry and "1 attempt left" in retry
    # It does not give the answer away: the second attempt still screens.
    assert "not the right one" in retry
    assert "scrambled" not in retry and "lower score" not in retry
    answer_check(worker, checked_campaign, right=True)
    screening = Screening.objects.get(annotator=worker.annotator)
    assert (screening.attempts, screening.passed) == (2, True)


def test_two_failed_attempts_screen_out_with_no_hits_and_the_failed_code(worker, checked_campaign):
    worker.enter(checked_campaign, pid="careless")
    start(worker, checked_campaign)
    answer_check(worker, checked_campaign, right=False)
    response = answer_check(worker, checked_campaign, right=False)
    done = worker.get(worker.get(response.url).url)
    assert code_on(done) == checked_campaign.failed_completion_code
    assert "Failed comprehension check" in done.content.decode()
    # Back to the entry or the check: the completion page; no HIT, no third attempt.
    assert worker.get(url("entry", checked_campaign)).url == url("done", checked_campaign)
    assert worker.get(url("check", checked_campaign)).url == url("done", checked_campaign)
    assert not Assignment.objects.exists()
    screening = Screening.objects.get(annotator=worker.annotator)
    assert (screening.attempts, screening.passed) == (2, False)


def test_the_check_without_csrf_token_is_refused(worker, checked_campaign):
    worker.enter(checked_campaign, pid="forged")
    assert (
        worker.post(url("check", checked_campaign), {"score_a": "1", "score_b": "2"}).status_code
        == 403
    )
    assert not Screening.objects.exists()


def test_the_check_of_an_unknown_visitor_is_404(stranger, checked_campaign):
    assert stranger.get(url("check", checked_campaign)).status_code == 404
