"""Error-span annotation (annotation/judging/esa.py): the page, what a submission stores
(the score and exactly the spans marked), the checks on spans, the settings, the attention
and comprehension checks."""

import json
import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.judging import clean_criterion, esa, form_named
from annotation.models import (
    QUALITY,
    Assignment,
    ErrorSpan,
    Judgment,
    Output,
    Screening,
)
from tests.client import forms_on
from tests.factories import make_campaign, make_hit, make_system_set
from tests.judging_helpers import assert_copies_scored_above_originals_fail, hit_with_copy
from tests.world import Person

pytestmark = pytest.mark.django_db

ESA = form_named("esa").name
EMOJI_TEXT = "The 😀 café is cheap, near the river."


def esa_campaign(k: int = 3, **fields):
    """An open campaign of 3 systems and 4 items whose quality criterion is ESA, `k`
    outputs a page; one output of each item holds an emoji (an astral character)."""
    campaign = make_campaign(outputs_per_hit=max(k, 2), min_seconds_per_hit=0, **fields)
    _, systems, items = make_system_set(campaign, systems=3, items=4)
    Output.objects.filter(system=systems[0]).update(text=EMOJI_TEXT)
    quality = campaign.criteria.get(name=QUALITY)
    quality.form = ESA
    quality.settings = {"outputs_per_page": k}
    clean_criterion(quality)
    quality.save()
    return campaign, quality


def url(campaign, name, *args):
    return reverse(f"annotation:{name}", args=[campaign.slug, QUALITY, *args])


def take_hit(campaign) -> tuple[Person, Assignment]:
    person = Person()
    person.enter(campaign, pid="esa-worker")
    person.submit(person.get(url(campaign, "entry")))
    return person, Assignment.objects.get(annotator=person.annotator)


def answers(assignment, scores, spans=None) -> dict:
    """POST data: per slot, its score and its spans ([(start, end, severity)])."""
    data = {"submission_key": "key-1"}
    slots = list(assignment.hit.slots.order_by("position"))
    spans = spans or [[] for _ in slots]
    for slot, score, marked in zip(slots, scores, spans, strict=True):
        data[f"score_{slot.position}"] = str(score)
        data[f"spans_{slot.position}"] = json.dumps(
            [{"start": a, "end": b, "severity": s} for a, b, s in marked]
        )
    return data


def stored(assignment) -> dict[int, tuple[float, list[tuple[int, int, str]]]]:
    """Slot position -> (score, spans) as the database holds them."""
    found = {}
    for j in Judgment.objects.filter(assignment=assignment).select_related("slot"):
        spans = list(j.error_spans.order_by("start").values_list("start", "end", "severity"))
        found[j.slot.position] = (j.score, spans)
    return found


def test_esa_page_shows_each_output_with_its_marking_tools_and_slider():
    campaign, _ = esa_campaign()
    person, assignment = take_hit(campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    html = page.content.decode()
    assert html.count('class="esa-text"') == 3
    assert len(re.findall(r'<input type="range"[^>]*data-unset', html)) == 3
    assert html.count(">Minor error</button>") == 3 and html.count(">Major error</button>") == 3
    fields = sorted(f for f in forms_on(page)[0].fields if f != "csrfmiddlewaretoken")
    assert fields == sorted(
        [f"score_{p}" for p in (1, 2, 3)] + [f"spans_{p}" for p in (1, 2, 3)] + ["submission_key"]
    )


def test_esa_empty_output_is_shown_as_such_with_nothing_to_mark_and_scored():
    """A system that produced no text: the page says so beside its (empty) text, and a
    span in it is refused; its score is stored like any other."""
    campaign, _ = esa_campaign()
    Output.objects.filter(item__campaign=campaign, system__name="sys2").update(text="")
    person, assignment = take_hit(campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    html = page.content.decode()
    assert html.count("(this system produced no text)") == 1
    assert html.count('class="esa-text"') == 3
    slots = list(assignment.hit.slots.order_by("position"))
    empty = next(s.position for s in slots if s.output.text == "")
    spans = [[(0, 1, "minor")] if s.position == empty else [] for s in slots]
    refused = person.submit(page, answers(assignment, [30, 0, 100], spans))
    assert "is not within the sentence" in refused.content.decode()
    response = person.submit(page, answers(assignment, [30, 0, 100]))
    assert response.status_code == 302
    assert stored(assignment)[empty] == ([30, 0, 100][empty - 1], [])


def test_esa_submission_stores_the_score_and_exactly_the_spans_marked():
    campaign, quality = esa_campaign()
    person, assignment = take_hit(campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    slots = list(assignment.hit.slots.order_by("position"))
    emoji = next(s.position for s in slots if s.output.text == EMOJI_TEXT)
    # "café" is characters 6-10 in code points (the emoji is one), 7-11 in UTF-16 units.
    assert EMOJI_TEXT[6:10] == "café"
    marked = {emoji: [(6, 10, "minor"), (14, 19, "major")]}
    spans = [marked.get(s.position, []) for s in slots]
    response = person.submit(page, answers(assignment, [30, 0, 100], spans))
    assert response.status_code == 302
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert stored(assignment) == {
        p: (float(score), marked.get(p, []))
        for p, score in zip((1, 2, 3), (30, 0, 100), strict=True)
    }
    assert ErrorSpan.objects.count() == 2
    assert Judgment.objects.filter(assignment=assignment, criterion=quality).count() == 3


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ([(5, 5, "minor")], "is not within the sentence"),
        ([(-1, 3, "minor")], "is not within the sentence"),
        ([(0, 999, "major")], "is not within the sentence"),
        ([(0, 3, "fatal")], "its severity must be minor or major"),
        ([(0, 3, "minor"), (0, 3, "major")], "is marked twice"),
        ([(0, 5, "minor"), (3, 8, "major")], "overlap: remove one of them"),
        ([(n, n + 1, "minor") for n in range(51)], "Too many error spans"),
    ],
)
def test_esa_bad_spans_are_refused_keeping_what_was_marked(spans, message):
    campaign, _ = esa_campaign()
    person, assignment = take_hit(campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    # The first sentence is long enough for 51 one-character spans only as the text allows:
    # make it so.
    first = assignment.hit.slots.get(position=1)
    Output.objects.filter(pk=first.output_id).update(text="x" * 60)
    good = [(0, 2, "major")]
    data = answers(assignment, [40, 50, 60], [spans, good, []])
    response = person.submit(page, data)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Please correct 1 thing below" in html and message in html
    assert Judgment.objects.count() == 0 and ErrorSpan.objects.count() == 0
    # What was marked and typed is on the page again.
    kept = forms_on(response)[0].hidden
    assert json.loads(kept["spans_2"]) == [{"start": 0, "end": 2, "severity": "major"}]
    assert 'name="score_1" value="40"' in html and 'name="score_3" value="60"' in html
    assert 'id="esa-text-1"' in html  # the summary's link leads to the sentence


def test_esa_untouched_slider_is_refused():
    campaign, _ = esa_campaign()
    person, assignment = take_hit(campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    data = answers(assignment, [40, 50, 60])
    data["score_2"] = ""
    response = person.submit(page, data)
    assert response.status_code == 200
    assert "it has no score yet" in response.content.decode()
    assert not Judgment.objects.exists()


def test_parse_spans_counts_code_points_not_utf16_units():
    assert esa.parse_spans(json.dumps([{"start": 35, "end": 36, "severity": "minor"}]), EMOJI_TEXT)
    with pytest.raises(ValidationError, match="not within"):
        # 37 would fit in UTF-16 units (the emoji is two), not in code points.
        esa.parse_spans(json.dumps([{"start": 35, "end": 37, "severity": "minor"}]), EMOJI_TEXT)
    with pytest.raises(ValidationError, match="could not be read"):
        esa.parse_spans("[{", EMOJI_TEXT)


def test_esa_one_output_a_page():
    campaign, _ = esa_campaign(k=1)
    person, assignment = take_hit(campaign)
    assert assignment.hit.slots.count() == 1
    page = person.get(url(campaign, "hit", assignment.pk))
    person.submit(page, answers(assignment, [70], [[(0, 3, "minor")]]))
    assert list(Judgment.objects.values_list("score", flat=True)) == [70.0]
    assert list(ErrorSpan.objects.values_list("start", "end", "severity")) == [(0, 3, "minor")]


def test_esa_settings_are_checked_naming_the_key():
    _, quality = esa_campaign()
    quality.settings = {"outputs_per_page": 11}
    with pytest.raises(ValidationError, match="outputs_per_page: a whole number from 1 to 10"):
        clean_criterion(quality)
    quality.settings = {"colour": "red"}
    with pytest.raises(ValidationError, match="unknown setting"):
        clean_criterion(quality)


def checked_esa_hit(campaign, annotator, original: float, degraded: float) -> None:
    """A submitted ESA HIT whose attention check scored `degraded` against `original`."""
    quality = campaign.criteria.get(name=QUALITY)
    assignment = hit_with_copy(campaign, annotator, quality)
    for slot in assignment.hit.slots.all():
        score = degraded if slot.degraded_text else (original if slot.position == 1 else 50)
        judgment = Judgment.objects.create(
            assignment=assignment, slot=slot, criterion=quality, score=score
        )
        ErrorSpan.objects.create(judgment=judgment, start=0, end=3, severity="major")


def test_esa_attention_verdict_fails_who_scores_copies_above_originals():
    campaign, _ = esa_campaign(attention_check_every=1)
    assert_copies_scored_above_originals_fail(campaign, checked_esa_hit)


def test_esa_comprehension_check_passes_a_copy_scored_below_the_sentence():
    campaign, quality = esa_campaign()
    type(quality).objects.filter(pk=quality.pk).update(comprehension_check=True)
    person = Person()
    person.enter(campaign, pid="esa-check")
    response = person.submit(person.get(url(campaign, "entry")))
    assert response.url == url(campaign, "check")
    page = person.get(url(campaign, "check"))
    assert 'type="range"' in page.content.decode()
    sentence_first = person.annotator.pk % 2 == 0
    a, b = (80, 10) if sentence_first else (10, 80)
    person.submit(page, {"score_a": str(a), "score_b": str(b)})
    assert Screening.objects.get(annotator=person.annotator).passed


def test_esa_instructions_show_the_worked_example():
    campaign, _ = esa_campaign()
    person = Person()
    person.enter(campaign, pid="esa-reader")
    html = person.get(url(campaign, "entry")).content.decode()
    assert "Mark its errors" in html and 'class="err-major">very cheap<' in html


def test_spans_of_an_identical_output_follow_its_own_white_space():
    shown = "A cheap  pub, near\tthe river."
    other = " A cheap pub,\nnear the  river. "
    spans = [esa.Span(2, 7, "minor"), esa.Span(9, 18, "major"), esa.Span(7, 9, "minor")]
    mapped = esa.spans_in(spans, shown, other)
    assert [other[s.start : s.end] for s in mapped] == ["cheap", "pub,\nnear"]
    assert [s.severity for s in mapped] == ["minor", "major"]
    assert esa.spans_in(spans, shown, shown) == spans


def test_identical_outputs_shown_once_get_the_spans_each_in_its_own_text():
    campaign, quality = esa_campaign(k=3)
    item = campaign.items.first()
    outputs = list(item.outputs.order_by("pk"))
    Output.objects.filter(pk=outputs[0].pk).update(text="Two  spaces here.")
    Output.objects.filter(pk=outputs[1].pk).update(text="Two spaces here.")
    hit = make_hit(list(item.outputs.order_by("pk")), criterion=quality)
    person = Person()
    annotator = person.enter(campaign, pid="esa-same")
    assignment = Assignment.objects.create(hit=hit, annotator=annotator)
    page = person.get(url(campaign, "hit", assignment.pk))
    assert page.content.decode().count('class="esa-text"') == 2
    shown = "Two  spaces here."
    data = {
        "submission_key": "k",
        "score_1": "40",
        "spans_1": json.dumps([{"start": 5, "end": 11, "severity": "major"}]),
        "score_3": "90",
        "spans_3": "[]",
    }
    assert shown[5:11] == "spaces"
    assert person.submit(page, data).status_code == 302
    found = {
        j.slot.output.text: [(s.start, s.end) for s in j.error_spans.all()]
        for j in Judgment.objects.filter(assignment=assignment).select_related("slot__output")
    }
    assert found["Two  spaces here."] == [(5, 11)] and found["Two spaces here."] == [(4, 10)]


@pytest.mark.parametrize("depth", [995, 1_500])
def test_esa_spans_nested_past_pythons_limit_are_refused_not_a_500(depth):
    """Issue 39: a spans field 990+ levels deep raised RecursionError (500)."""
    campaign, _ = esa_campaign()
    person, assignment = take_hit(campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    data = answers(assignment, [40, 50, 60])
    data["spans_1"] = "[" * depth + "]" * depth
    response = person.submit(page, data)
    assert response.status_code == 200
    assert "The marked errors could not be read: mark them again." in response.content.decode()
    assert not Judgment.objects.exists() and not ErrorSpan.objects.exists()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED


def test_parse_spans_refuses_spans_nested_deeper_than_a_list_of_objects():
    with pytest.raises(ValidationError, match="could not be read"):
        esa.parse_spans('[[{"start": 0, "end": 1, "severity": "minor"}]]', EMOJI_TEXT)
