"""The HIT form under a worker's hands: errors go as their fields are corrected, Enter moves
from one score box to the next instead of sending a half-filled page, and going Back to a
page already submitted (and sending it again) says what happened."""

import re

import pytest

from annotation.handout.submission import Outcome
from annotation.models import Assignment, Campaign, Judgment, Screening
from annotation.views import BACK_TO_SUBMITTED, NEXT_PAGE, OUTCOME_MESSAGES
from tests.browser.conftest import DESKTOP
from tests.browser.demo import demo_campaign
from tests.factories import make_item, make_output

pytestmark = pytest.mark.browser

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect

SCORES = [150, 100, 80, 40, 100]


def start(browser, live_server, criterion: str, pid: str):
    page = browser.new_page(viewport=DESKTOP)
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/annotate/demo/{criterion}/?PROLIFIC_PID={pid}")
    page.get_by_role("button", name="Start").click()
    expect(page.locator("#hit-form")).to_be_visible()
    return page


def two_items() -> Campaign:
    """The demo campaign with a second item, so that a submitted HIT has a next one."""
    campaign = demo_campaign(max_hits_per_annotator=2)
    item = make_item(campaign, external_id="second")
    for system in campaign.systems.all():
        make_output(item, system, text=f"The second item, as {system.name} puts it.")
    return campaign


def answer(page, scores) -> None:
    """Type the scores and tick 'reflects the input perfectly' for every sentence."""
    for n, sentence in enumerate(page.locator("fieldset.output").all()):
        sentence.get_by_label("Score").fill(str(scores[n]))
        sentence.get_by_label("reflects the input perfectly").check()


def saved_scores(assignment: Assignment) -> list[int]:
    return sorted(assignment.judgments.values_list("score", flat=True))


def test_corrected_fields_lose_their_errors_and_only_the_rest_come_back(live_server, browser):
    demo_campaign()
    page = start(browser, live_server, "quality", "corrector")
    sentences = page.locator("fieldset.output")
    answer(page, ["abc", "", *SCORES[2:]])
    sentences.nth(3).get_by_label("reflects the input perfectly").uncheck()
    page.get_by_role("button", name="Submit and continue").click()
    summary = page.locator("#error-summary")
    expect(summary.locator("li")).to_have_count(3)
    expect(summary).to_contain_text("Sentence A: Enter a number")
    expect(summary).to_contain_text("Sentence B: Give this sentence a score")
    expect(summary).to_contain_text("Sentence D: Tick at least one box")
    missing = page.locator("#ranking-missing")  # what the live ranking still lacks
    expect(missing).to_contain_text("Not a whole number above 0: A. ")
    expect(missing).to_contain_text("No coverage box ticked yet: D.")

    # A's score corrected: its error goes, under it and in the summary.
    first = sentences.nth(0)
    first.get_by_label("Score").fill("150")
    expect(first.locator("[data-error-for]")).to_have_count(0)
    expect(first).not_to_have_class(re.compile("has-error"))
    expect(first.get_by_label("Score")).not_to_have_attribute("aria-invalid", "true")
    expect(summary.locator("li")).to_have_count(2)
    expect(summary.get_by_role("heading")).to_have_text("Please correct 2 things below")
    # D's coverage ticked: the same.
    sentences.nth(3).get_by_label("misses some information").check()
    expect(sentences.nth(3).locator("[data-error-for]")).to_have_count(0)
    expect(summary.locator("li")).to_have_count(1)
    expect(summary.get_by_role("heading")).to_have_text("Please correct 1 thing below")
    expect(missing).not_to_contain_text("coverage")
    # B, not touched, keeps its error.
    expect(sentences.nth(1).locator("[data-error-for]")).to_contain_text("Give this sentence")
    expect(sentences.nth(1)).to_have_class(re.compile("has-error"))

    page.get_by_role("button", name="Submit and continue").click()
    expect(summary.locator("li")).to_have_count(1)
    expect(summary).to_contain_text("Sentence B: Give this sentence a score")
    expect(page.locator("[data-error-for]")).to_have_count(1)
    assert not Judgment.objects.exists()
    sentences.nth(1).get_by_label("Score").fill("100")
    expect(summary).to_be_hidden()
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.locator("#completion-code")).to_be_visible()
    assert saved_scores(Assignment.objects.get()) == sorted(SCORES)


def test_enter_in_a_score_box_moves_to_the_next_box_not_submitting(live_server, browser):
    demo_campaign()
    page = start(browser, live_server, "naturalness", "typist")
    hit_page = page.url
    boxes = page.locator("fieldset.output .score-row input")
    names = [box.get_attribute("name") for box in boxes.all()]
    boxes.first.focus()
    for name, score in zip(names, SCORES, strict=True):
        assert page.evaluate("document.activeElement.name") == name
        page.keyboard.type(str(score))
        page.keyboard.press("Enter")
    # From the last box to the button, still on the same page, nothing sent.
    expect(page.locator("#submit-hit")).to_be_focused()
    assert page.url == hit_page
    expect(page.locator("#error-summary")).to_have_count(0)
    assert Assignment.objects.get().status == Assignment.Status.ASSIGNED
    page.keyboard.press("Enter")  # on the button: send
    expect(page.locator("#completion-code")).to_be_visible()
    assignment = Assignment.objects.get()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert saved_scores(assignment) == sorted(SCORES)


def test_enter_on_the_comprehension_check_moves_on_too(live_server, browser):
    campaign = demo_campaign()
    campaign.criteria.update(comprehension_check=True)
    page = browser.new_page(viewport=DESKTOP)
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/annotate/demo/quality/?PROLIFIC_PID=checked")
    page.get_by_role("button", name="Start").click()
    button = page.get_by_role("button", name="Check and start")
    expect(button).to_be_visible()
    page.locator("#id_score_a").focus()
    page.keyboard.type("120")
    page.keyboard.press("Enter")
    expect(page.locator("#id_score_b")).to_be_focused()
    page.keyboard.type("15")
    page.keyboard.press("Enter")
    expect(button).to_be_focused()
    assert not Screening.objects.exists()


def test_back_to_a_submitted_page_says_so_and_stays_on_the_next(live_server, browser):
    two_items()
    page = start(browser, live_server, "quality", "back-reload")
    first = page.url
    answer(page, SCORES)
    page.get_by_role("button", name="Submit and continue").click()
    expect(page).not_to_have_url(first)
    second = page.url
    page.go_back()  # this browser asks the server again
    expect(page).to_have_url(second)
    expect(page.locator(".messages")).to_contain_text(f"{BACK_TO_SUBMITTED} {NEXT_PAGE}")
    submitted = Assignment.objects.get(status=Assignment.Status.SUBMITTED)
    assert saved_scores(submitted) == sorted(SCORES)
    assert Judgment.objects.count() == 5
    assert Assignment.objects.filter(status=Assignment.Status.ASSIGNED).count() == 1


def test_back_then_resubmit_says_the_page_was_already_submitted(
    live_server, browser_with_page_cache
):
    two_items()
    page = start(browser_with_page_cache, live_server, "quality", "back-resubmit")
    first = page.url
    answer(page, SCORES)
    page.get_by_role("button", name="Submit and continue").click()
    expect(page).not_to_have_url(first)
    second = page.url
    # Back shows the page as it was left; the worker changes a score and sends it again.
    page.go_back(wait_until="commit")  # a page from the cache fires no load event
    expect(page).to_have_url(first)
    score = page.locator("fieldset.output").first.get_by_label("Score")
    expect(score).to_have_value(str(SCORES[0]))
    score.fill("999")
    # At once: the page's guard against a double click has not stayed on from the first time.
    expect(page.get_by_role("button", name="Submit and continue")).to_be_enabled(timeout=1000)
    page.get_by_role("button", name="Submit and continue").click()
    expect(page).to_have_url(second, timeout=3000)
    expect(page.locator(".messages")).to_contain_text(
        f"{OUTCOME_MESSAGES[Outcome.REPEATED]} {NEXT_PAGE}"
    )
    expect(page.locator("#hit-form")).to_be_visible()
    submitted = Assignment.objects.get(status=Assignment.Status.SUBMITTED)
    assert saved_scores(submitted) == sorted(SCORES)  # the first answers, once
    assert Judgment.objects.count() == 5
    following = Assignment.objects.get(status=Assignment.Status.ASSIGNED)
    assert page.url.endswith(f"/hit/{following.pk}/")
    assert not following.judgments.exists()
