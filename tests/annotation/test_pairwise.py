"""Pairwise preference and best-worst of k (annotation/judging/pairwise.py): the page, what a
submission stores, validation, the settings, the attention and comprehension checks."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.attention import record_attention_verdict
from annotation.judging import clean_criterion, form_named
from annotation.models import (
    QUALITY,
    Assignment,
    CampaignCriterion,
    Judgment,
    Justification,
    Screening,
)
from tests.client import forms_on
from tests.factories import (
    make_annotator,
    make_campaign,
    make_item,
    make_output,
    make_system,
    make_system_set,
)
from tests.judging_helpers import hit_with_copy
from tests.world import Person

pytestmark = pytest.mark.django_db

PAIRWISE = form_named("pairwise").name


def pairwise_campaign(best_worst: int = 0, systems: int = 3, **fields):
    """An open campaign of `systems` systems and 4 items whose quality criterion is judged
    pairwise (or best-worst of `best_worst`)."""
    campaign = make_campaign(min_seconds_per_hit=0, **fields)
    make_system_set(campaign, systems=systems, items=4)
    quality = campaign.criteria.get(name=QUALITY)
    quality.form = PAIRWISE
    quality.question = "Which sentence says the input better?"
    quality.settings = {"best_worst": best_worst} if best_worst else {}
    clean_criterion(quality)
    quality.save()
    return campaign, quality


def entered(campaign, pid="pairwise-worker") -> Person:
    person = Person()
    person.enter(campaign, pid=pid)
    return person


def url(campaign, name, *args):
    return reverse(f"annotation:{name}", args=[campaign.slug, QUALITY, *args])


def take_hit(person, campaign) -> Assignment:
    response = person.submit(person.get(url(campaign, "entry")))
    assignment = Assignment.objects.get(annotator=person.annotator, status="assigned")
    assert response.url == url(campaign, "hit", assignment.pk)
    return assignment


def stored(assignment) -> dict[str, float]:
    """System name -> the score stored for its slot (the attention copy as 'copy')."""
    rows = Judgment.objects.filter(assignment=assignment).select_related("slot__output__system")
    return {("copy" if j.slot.degraded_text else j.slot.output.system.name): j.score for j in rows}


def systems_by_position(assignment) -> list[str]:
    slots = assignment.hit.slots.filter(degraded_text="").order_by("position")
    return [slot.output.system.name for slot in slots]


def test_page_shows_two_outputs_side_by_side_with_three_choices_and_the_question():
    campaign, _ = pairwise_campaign()
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    html = page.content.decode()
    assert 'class="pair two"' in html
    assert html.count('class="card output"') == 2
    assert "Which sentence says the input better?" in html
    assert "The input these sentences describe" in html  # quality shows its input
    radios = re.findall(r'<input type="radio" name="choice" value="(\w+)"', html)
    assert radios == ["a", "tie", "b"]
    for words in ("A is better", "Tie", "B is better"):
        assert words in html
    assert 'maxlength="1000"' in html  # the justification box is size-limited


def test_an_empty_output_is_shown_as_such_and_judged_like_any_other():
    """A system that produced no text for the item: the page says so, and the choice
    against it is stored as any other."""
    campaign, _ = pairwise_campaign(systems=2)
    mute = campaign.systems.order_by("name").first()
    mute.outputs.update(text="")
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    html = page.content.decode()
    assert html.count('class="card output"') == 2
    assert html.count("(this system produced no text)") == 1
    person.submit(page, {"choice": "a" if systems_by_position(assignment)[0] != mute.name else "b"})
    assert stored(assignment)[mute.name] == 0.0
    assignment.refresh_from_db()
    assert assignment.status == "submitted"


def test_the_input_is_left_out_where_the_criterion_does_not_show_it():
    campaign, quality = pairwise_campaign()
    CampaignCriterion.objects.filter(pk=quality.pk).update(shows_input=False)
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    html = person.get(url(campaign, "hit", assignment.pk)).content.decode()
    assert "The input these sentences describe" not in html


@pytest.mark.parametrize(
    "choice, scores", [("a", (1.0, 0.0)), ("b", (0.0, 1.0)), ("tie", (0.5, 0.5))]
)
def test_submission_stores_exactly_the_choice_as_one_judgment_per_slot(choice, scores):
    campaign, quality = pairwise_campaign()
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    person.submit(page, {"choice": choice, "justification": "  A names every fact.  "})
    a, b = systems_by_position(assignment)
    assert stored(assignment) == {a: scores[0], b: scores[1]}
    assert set(Judgment.objects.filter(assignment=assignment).values_list("criterion", flat=True))
    assert all(j.criterion_id == quality.pk for j in Judgment.objects.filter(assignment=assignment))
    note = Justification.objects.get(assignment=assignment)
    assert (note.text, note.criterion_id) == ("A names every fact.", quality.pk)
    assignment.refresh_from_db()
    assert assignment.status == "submitted"


def test_no_justification_row_when_the_box_is_left_empty():
    campaign, _ = pairwise_campaign()
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    person.submit(person.get(url(campaign, "hit", assignment.pk)), {"choice": "tie"})
    assert not Justification.objects.exists()
    assert Judgment.objects.filter(assignment=assignment).count() == 2


def test_a_page_without_a_choice_is_refused_keeping_what_was_typed():
    campaign, _ = pairwise_campaign()
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    again = person.submit(page, {"justification": "B repeats itself"})
    html = again.content.decode()
    assert again.status_code == 200
    assert "Choose which sentence is better, or that they are tied." in html
    assert 'id="error-summary"' in html and 'href="#id_choice_0"' in html
    assert "B repeats itself</textarea>" in html
    assert not Judgment.objects.exists()


def test_a_justification_over_the_limit_is_refused():
    campaign, _ = pairwise_campaign()
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    again = person.submit(page, {"choice": "a", "justification": "x" * 1001})
    assert "at most 1000 characters" in again.content.decode()
    assert 'value="a" ' in again.content.decode() and "checked" in again.content.decode()
    assert not Judgment.objects.exists()


def test_best_worst_page_stores_best_one_worst_zero_and_the_rest_a_half():
    campaign, _ = pairwise_campaign(best_worst=4, systems=5)
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    html = page.content.decode()
    assert html.count('class="card output"') == 4 and 'class="pair many"' in html
    keys = re.findall(r'name="best" value="(\d+)"', html)
    assert len(keys) == 4
    person.submit(page, {"best": keys[2], "worst": keys[0]})
    names = systems_by_position(assignment)
    assert stored(assignment) == {
        names[0]: 0.0,
        names[1]: 0.5,
        names[2]: 1.0,
        names[3]: 0.5,
    }


def test_best_worst_refuses_the_same_sentence_as_best_and_worst_and_a_missing_one():
    campaign, _ = pairwise_campaign(best_worst=3)
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    keys = re.findall(r'name="best" value="(\d+)"', page.content.decode())
    again = person.submit(page, {"best": keys[1], "worst": keys[1]})
    html = again.content.decode()
    assert "The best and the worst must be two different sentences." in html
    # What was chosen is kept.
    assert re.search(rf'name="best" value="{keys[1]}"[^>]*checked', html)
    missing = person.submit(page, {"best": keys[0]})
    assert "Choose the worst sentence." in missing.content.decode()
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("settings", [{"best_worst": 2}, {"best_worst": "3"}, {"k": 3}])
def test_settings_refuse_a_wrong_best_worst(settings):
    campaign, quality = pairwise_campaign()
    quality.settings = settings
    with pytest.raises(ValidationError, match="best_worst"):
        clean_criterion(quality)


def test_attention_check_is_a_second_comparison_whose_copy_stores_its_result():
    campaign, _ = pairwise_campaign(attention_check_every=1)
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    html = page.content.decode()
    assert "A second comparison" in html
    copy_slot = assignment.hit.slots.get(degraded_text__gt="")
    original = assignment.hit.slots.get(degraded_text="", output=copy_slot.output)
    copy_left = copy_slot.position < original.position
    # The careful answer: the original wins the second comparison.
    person.submit(page, {"choice": "a", "check": "b" if copy_left else "a"})
    assert stored(assignment)["copy"] == 0.0
    assert len(stored(assignment)) == 3


def checked_pairwise_hit(campaign, quality, annotator, copy_score: float) -> None:
    """A submitted pairwise HIT whose attention check's copy got `copy_score`."""
    assignment = hit_with_copy(campaign, annotator, quality)
    for slot in assignment.hit.slots.all():
        score = copy_score if slot.degraded_text else (1.0 if slot.position == 1 else 0.0)
        Judgment.objects.create(assignment=assignment, slot=slot, criterion=quality, score=score)


def test_attention_verdict_fails_who_lets_copies_win_or_tie():
    campaign, quality = pairwise_campaign(attention_check_every=1)
    careless, tying, careful = (make_annotator(campaign) for _ in range(3))
    for _ in range(4):
        checked_pairwise_hit(campaign, quality, careless, copy_score=1.0)
        checked_pairwise_hit(campaign, quality, tying, copy_score=0.5)
        checked_pairwise_hit(campaign, quality, careful, copy_score=0.0)
    assert record_attention_verdict(careless).failed
    assert record_attention_verdict(tying).failed
    verdict = record_attention_verdict(careful)
    assert not verdict.failed and verdict.checks == 4
    careless.refresh_from_db()
    assert careless.is_excluded


@pytest.mark.parametrize("prefers_sentence, passed", [(True, True), (False, False)])
def test_comprehension_check_passes_who_prefers_the_sentence(prefers_sentence, passed):
    campaign, quality = pairwise_campaign()
    CampaignCriterion.objects.filter(pk=quality.pk).update(comprehension_check=True)
    person = entered(campaign)
    response = person.submit(person.get(url(campaign, "entry")))
    assert response.url == url(campaign, "check")
    page = person.get(url(campaign, "check"))
    assert re.findall(r'name="choice" value="(\w+)"', page.content.decode()) == ["a", "tie", "b"]
    sentence_first = person.annotator.pk % 2 == 0
    sentence, copy = ("a", "b") if sentence_first else ("b", "a")
    person.submit(page, {"choice": sentence if prefers_sentence else copy})
    screening = Screening.objects.get(annotator=person.annotator)
    assert screening.passed is passed and screening.attempts == 1


def test_comprehension_check_counts_a_tie_as_failing():
    campaign, quality = pairwise_campaign()
    CampaignCriterion.objects.filter(pk=quality.pk).update(comprehension_check=True)
    person = entered(campaign)
    person.submit(person.get(url(campaign, "entry")))
    person.submit(person.get(url(campaign, "check")), {"choice": "tie"})
    assert not Screening.objects.get(annotator=person.annotator).passed


def test_a_refused_check_says_why():
    campaign, quality = pairwise_campaign()
    CampaignCriterion.objects.filter(pk=quality.pk).update(comprehension_check=True)
    person = entered(campaign)
    person.submit(person.get(url(campaign, "entry")))
    again = person.submit(person.get(url(campaign, "check")), {})
    assert "Choose which sentence is better" in again.content.decode()
    assert not Screening.objects.exists()


def test_instructions_show_the_question_and_the_three_choices():
    campaign, _ = pairwise_campaign()
    person = entered(campaign)
    html = person.get(url(campaign, "entry")).content.decode()
    assert "Which sentence says the input better?" in html
    assert "A is better" in html and "Tie" in html
    assert forms_on(person.get(url(campaign, "entry")))


def test_best_worst_page_with_an_attention_check_asks_it_apart_from_the_choice():
    campaign, _ = pairwise_campaign(best_worst=3, attention_check_every=1)
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    html = page.content.decode()
    keys = re.findall(r'name="best" value="(\d+)"', html)
    assert len(keys) == 3  # the copy is not among the sentences to choose from
    assert "A second comparison" in html
    copy_slot = assignment.hit.slots.get(degraded_text__gt="")
    original = assignment.hit.slots.get(degraded_text="", output=copy_slot.output)
    copy_left = copy_slot.position < original.position
    person.submit(page, {"best": keys[0], "worst": keys[2], "check": "a" if copy_left else "b"})
    names = systems_by_position(assignment)
    assert stored(assignment) == {names[0]: 1.0, names[1]: 0.5, names[2]: 0.0, "copy": 1.0}


def test_identical_outputs_ask_nothing_and_store_a_tie():
    campaign = make_campaign(min_seconds_per_hit=0)
    item = make_item(campaign)
    for name in ("same-1", "same-2"):
        make_output(item, make_system(campaign, name=name), text="The very same sentence.")
    quality = campaign.criteria.get(name=QUALITY)
    quality.form = PAIRWISE
    quality.save()
    person = entered(campaign)
    assignment = take_hit(person, campaign)
    page = person.get(url(campaign, "hit", assignment.pk))
    html = page.content.decode()
    assert "identical: there is nothing to choose" in html
    assert 'name="choice"' not in html
    person.submit(page, {})
    assert stored(assignment) == {"same-1": 0.5, "same-2": 0.5}
