"""Direct assessment (annotation/judging/da.py): the page, what a submission stores, the
settings, the attention and comprehension checks."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.judging import clean_criterion, form_named
from annotation.models import (
    NATURALNESS,
    QUALITY,
    Assignment,
    CampaignCriterion,
    Judgment,
    Screening,
)
from tests.client import forms_on
from tests.factories import make_campaign, make_system_set
from tests.judging_helpers import assert_copies_scored_above_originals_fail, hit_with_copy
from tests.world import Person

pytestmark = pytest.mark.django_db

DA = form_named("da").name


def da_campaign(k: int = 3, **fields):
    """An open campaign of 3 systems and 4 items whose quality criterion is DA, asking
    naturalness (DA too) on the same page; `k` outputs a page."""
    campaign = make_campaign(outputs_per_hit=max(k, 2), min_seconds_per_hit=0, **fields)
    make_system_set(campaign, systems=3, items=4)
    campaign.criteria.filter(name=NATURALNESS).update(form=DA)
    quality = campaign.criteria.get(name=QUALITY)
    quality.form = DA
    quality.settings = {"also_asks": [NATURALNESS], "outputs_per_page": k}
    clean_criterion(quality)
    quality.save()
    return campaign, quality


def entered(campaign) -> Person:
    person = Person()
    person.enter(campaign, pid="da-worker")
    return person


def url(campaign, name, criterion=QUALITY, *args):
    return reverse(f"annotation:{name}", args=[campaign.slug, criterion, *args])


def take_hit(person, campaign) -> Assignment:
    response = person.submit(person.get(url(campaign, "entry")))
    assignment = Assignment.objects.get(annotator=person.annotator)
    assert response.url == url(campaign, "hit", QUALITY, assignment.pk)
    return assignment


def scores_for(assignment, quality, naturalness) -> dict:
    slots = list(assignment.hit.slots.order_by("position"))
    data = {"submission_key": "key-1"}
    for slot, q, n in zip(slots, quality, naturalness, strict=True):
        data[f"score_{slot.position}_0"] = str(q)
        data[f"score_{slot.position}_1"] = str(n)
    return data


def test_da_page_shows_a_slider_and_box_per_output_and_criterion():
    campaign, _ = da_campaign()
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", QUALITY, assignment.pk))
    html = page.content.decode()
    assert len(re.findall(r'<input type="range"[^>]*data-unset', html)) == 6
    fields = [f for f in forms_on(page)[0].fields if f.startswith("score_")]
    assert fields == [f"score_{p}_{c}" for p in (1, 2, 3) for c in (0, 1)]
    assert "0: very poor" in html and "100: excellent" in html
    assert CampaignCriterion.objects.get(campaign=campaign, name=NATURALNESS).question_text in html


def test_da_submission_stores_exactly_what_was_entered():
    campaign, quality = da_campaign()
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", QUALITY, assignment.pk))
    data = scores_for(assignment, [0, 55, 100], [12, 34, 99])
    response = person.submit(page, data)
    assert response.status_code == 302
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    # One judgment per slot and criterion of the page, on the one assignment.
    judged = Judgment.objects.filter(assignment=assignment)
    assert sorted(judged.values_list("criterion__name", "slot__position", "score")) == [
        (NATURALNESS, 1, 12.0),
        (NATURALNESS, 2, 34.0),
        (NATURALNESS, 3, 99.0),
        (QUALITY, 1, 0.0),
        (QUALITY, 2, 55.0),
        (QUALITY, 3, 100.0),
    ]
    assert Judgment.objects.count() == 6
    naturalness = CampaignCriterion.objects.get(campaign=campaign, name=NATURALNESS)
    assert Judgment.objects.counted().for_criterion(naturalness).count() == 3
    quality.refresh_from_db()
    naturalness.refresh_from_db()
    assert quality.judgments_version >= 1 and naturalness.judgments_version == 1


def test_da_unset_and_wrong_sliders_are_refused_keeping_what_was_typed():
    campaign, _ = da_campaign()
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", QUALITY, assignment.pk))
    data = scores_for(assignment, [40, 101, 7], [12, 34, 99])
    data["score_3_1"] = ""  # never touched
    response = person.submit(page, data)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Please correct 2 things below" in html
    assert "Enter a whole number from 0 to 100." in html
    assert "Move the slider (or type a number from 0 to 100): it has no score yet." in html
    assert 'name="score_1_0" value="40"' in html and 'name="score_2_0" value="101"' in html
    assert 'name="score_3_0" value="7"' in html
    assert Judgment.objects.count() == 0
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED


def test_da_one_output_a_page():
    campaign, quality = da_campaign(k=1)
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    assert assignment.hit.slots.count() == 1
    page = person.get(url(campaign, "hit", QUALITY, assignment.pk))
    person.submit(page, scores_for(assignment, [70], [80]))
    assert sorted(Judgment.objects.values_list("criterion__name", "score")) == [
        (NATURALNESS, 80.0),
        (QUALITY, 70.0),
    ]


def test_a_criterion_asked_on_another_page_takes_nobody():
    campaign, _ = da_campaign()
    person = entered(campaign)
    response = person.get(url(campaign, "entry", NATURALNESS))
    assert response.status_code == 302 and response.url == url(campaign, "done", NATURALNESS)
    started = person.send("POST", url(campaign, "start", NATURALNESS))
    assert started.status_code == 302 and started.url == url(campaign, "done", NATURALNESS)
    assert not Assignment.objects.exists()


def test_da_settings_are_checked_naming_the_key():
    campaign, quality = da_campaign()
    quality.settings = {"also_asks": ["fluency"]}
    with pytest.raises(
        ValidationError, match="not direct-assessment criteria of this campaign: fluency"
    ):
        clean_criterion(quality)
    quality.settings = {"outputs_per_page": 11}
    with pytest.raises(ValidationError, match="outputs_per_page: a whole number from 1 to 10"):
        clean_criterion(quality)
    quality.settings = {"colour": "red"}
    with pytest.raises(ValidationError, match="unknown setting"):
        clean_criterion(quality)
    quality.settings = {"also_asks": [QUALITY]}
    with pytest.raises(ValidationError, match="each other criterion once"):
        clean_criterion(quality)


def checked_da_hit(campaign, annotator, original: float, degraded: float) -> None:
    """A submitted DA HIT whose attention check scored `degraded` against `original` on the
    page's own criterion (quality), and the other way round on the further one the page
    asks (naturalness), which the check does not read."""
    assignment = hit_with_copy(campaign, annotator, campaign.criteria.get(name=QUALITY))
    hit = assignment.hit
    naturalness = campaign.criteria.get(name=NATURALNESS)
    for slot in hit.slots.all():
        score = degraded if slot.degraded_text else (original if slot.position == 1 else 50)
        Judgment.objects.create(
            assignment=assignment, slot=slot, criterion=hit.criterion, score=score
        )
        further = original if slot.degraded_text else (degraded if slot.position == 1 else 50)
        Judgment.objects.create(
            assignment=assignment, slot=slot, criterion=naturalness, score=further
        )


def test_da_attention_verdict_fails_who_scores_copies_above_originals():
    campaign, _ = da_campaign(attention_check_every=1)
    assert_copies_scored_above_originals_fail(campaign, checked_da_hit)


def test_da_comprehension_check_passes_a_copy_scored_below_the_sentence():
    campaign, quality = da_campaign()
    CampaignCriterion.objects.filter(pk=quality.pk).update(comprehension_check=True)
    person = entered(campaign)
    response = person.submit(person.get(url(campaign, "entry")))
    assert response.url == url(campaign, "check")
    page = person.get(url(campaign, "check"))
    assert 'type="range"' in page.content.decode()
    sentence_first = person.annotator.pk % 2 == 0
    a, b = (80, 10) if sentence_first else (10, 80)
    person.submit(page, {"score_a": str(a), "score_b": str(b)})
    assert Screening.objects.get(annotator=person.annotator).passed
