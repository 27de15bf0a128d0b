"""A Prolific worker completes direct-assessment HITs (3 outputs, 2 criteria per page) in
headless Chromium: at 1280x900 with the mouse and the number boxes, and at 390x844 with the
keyboard only. The database then holds exactly what they entered.

With SCREENSHOTS=1 it writes docs/screenshots/da-{instructions,hit,error}[-phone].png.
"""

import re

import pytest

from annotation.judging import clean_criterion, form_named
from annotation.models import NATURALNESS, QUALITY, Assignment, Judgment
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.demo import demo_campaign
from tests.browser.judging_pages import arrive, nothing_cut_off, shoot

pytestmark = pytest.mark.browser

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect

STUDY = "study-da"
# The controls that must fit the window.
CONTROLS = "input[type=range], .value-box input, #submit-hit"


def da_demo():
    """The demo's item and five systems, 3 outputs a page, quality and naturalness asked on
    one DA page (naturalness has no pages of its own)."""
    campaign = demo_campaign(outputs_per_hit=3, max_hits_per_annotator=1)
    da = form_named("da").name
    campaign.criteria.update(form=da, comprehension_check=False)
    quality = campaign.criteria.get(name=QUALITY)
    quality.question = "How well does the sentence express the input, completely and correctly?"
    quality.settings = {"also_asks": [NATURALNESS], "low_label": "0: very poor"}
    clean_criterion(quality)
    quality.save()
    campaign.criteria.filter(name=NATURALNESS).update(
        question="How fluent and natural is the sentence, as if a native speaker wrote it?"
    )
    return campaign


def sliders(page) -> list[tuple[str, int, object]]:
    """(sentence text, criterion index, range) per slider, in page order."""
    found = []
    for sentence in page.locator("fieldset.output").all():
        text = sentence.locator(".utterance").inner_text().strip()
        for n, row in enumerate(sentence.locator(".slider-row").all()):
            found.append((text, n, row.locator("input[type=range]")))
    return found


def stored(pid: str) -> dict[tuple[str, int], float]:
    """(output text, criterion index) -> score of the worker's submitted page."""
    assignment = Assignment.objects.get(annotator__external_id=pid, status="submitted")
    judgments = Judgment.objects.filter(assignment=assignment)
    index = {QUALITY: 0, NATURALNESS: 1}
    return {
        (j.slot.output.text, index[j.criterion.name]): j.score
        for j in judgments.select_related("slot__output", "criterion")
    }


@pytest.mark.django_db(transaction=True)
def test_worker_completes_a_da_page_with_the_mouse_at_1280x900(browser, live_server):
    da_demo()
    page = arrive(browser, live_server, "da-mouse", DESKTOP, STUDY)
    expect(page.get_by_role("heading", name="What you will do")).to_be_visible()
    shoot(page, "da-instructions", DESKTOP)
    page.get_by_role("button", name="Start").click()
    expect(page.get_by_role("heading", name="Score each sentence on 2 criteria")).to_be_visible()
    expect(page.locator("input[type=range]")).to_have_count(6)
    expect(page.locator("input[type=range][data-unset]")).to_have_count(6)
    nothing_cut_off(page, CONTROLS)
    shoot(page, "da-hit", DESKTOP)
    entered = {}
    rows = sliders(page)
    for n, (text, index, slider) in enumerate(rows[:-1]):
        value = [85, 70, 40, 95, 0, 60][n]
        box = slider.locator(
            "xpath=ancestor::div[contains(@class,'slider-row')]//input[@inputmode]"
        )
        box.fill(str(value))
        expect(slider).to_have_value(str(value))
        entered[(text, index)] = value
    # The last slider left unset: refused, and everything typed is still there.
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.locator("#error-summary")).to_contain_text("Please correct 1 thing below")
    expect(page.locator("#error-summary")).to_contain_text("it has no score yet")
    for text, index, slider in sliders(page)[:-1]:
        expect(slider).to_have_value(str(entered[(text, index)]))
    nothing_cut_off(page, CONTROLS)
    shoot(page, "da-error", DESKTOP)
    text, index, slider = sliders(page)[-1]
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.75, box["y"] + box["height"] / 2)
    value = int(slider.input_value())
    assert 60 <= value <= 90  # three quarters along, whatever the thumb's width
    entered[(text, index)] = value
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.locator("#completion-code")).to_be_visible()
    assert stored("da-mouse") == entered


@pytest.mark.django_db(transaction=True)
def test_worker_completes_a_da_page_by_keyboard_only_at_390x844(browser, live_server):
    da_demo()
    page = arrive(browser, live_server, "da-keys", PHONE, STUDY)
    nothing_cut_off(page, CONTROLS)
    shoot(page, "da-instructions", PHONE)
    start = page.get_by_role("button", name="Start")
    while not start.evaluate("el => el === document.activeElement"):
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("input[type=range]")).to_have_count(6)
    nothing_cut_off(page, CONTROLS)
    shoot(page, "da-hit", PHONE)
    entered = {}
    # Per slider: Home (0), then ArrowRight as often as the value; Tab passes its box.
    values = iter([30, 12, 5, 0, 25, 18])
    for text, index, slider in sliders(page):
        while not slider.evaluate("el => el === document.activeElement"):
            page.keyboard.press("Tab")
        value = next(values)
        page.keyboard.press("Home")
        for _ in range(value):
            page.keyboard.press("ArrowRight")
        expect(slider).to_have_value(str(value))
        entered[(text, index)] = value
    submit = page.get_by_role("button", name="Submit and continue")
    while not submit.evaluate("el => el === document.activeElement"):
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#completion-code")).to_be_visible()
    assert stored("da-keys") == entered
    assert re.fullmatch(r"[0-9A-F]{8}", page.locator("#completion-code").inner_text())


@pytest.mark.django_db(transaction=True)
def test_enter_in_a_box_moves_on_and_the_input_stays_in_view_on_a_phone(browser, live_server):
    """Enter in a number box goes to the next box (from the last, to the button) and sends
    nothing; on a phone the input stays at the top while the sentences scroll, and folds
    away to its heading, as on RankME's page."""
    da_demo()
    page = arrive(browser, live_server, "da-enter", PHONE, STUDY)
    page.get_by_role("button", name="Start").click()
    boxes = page.locator(".value-box input")
    expect(boxes).to_have_count(6)
    boxes.nth(0).fill("40")
    boxes.nth(0).press("Enter")
    expect(boxes.nth(1)).to_be_focused()
    last = boxes.nth(5)
    last.fill("10")
    last.press("Enter")
    expect(page.locator("#submit-hit")).to_be_focused()
    expect(page.locator("#error-summary")).to_have_count(0)
    assignment = Assignment.objects.get(annotator__external_id="da-enter")
    assert assignment.status == Assignment.Status.ASSIGNED  # nothing was sent
    assert not Judgment.objects.exists()
    # The last sentence's box, far down: the input is still at the top of the screen.
    last.focus()
    assert page.evaluate("window.scrollY") > 0
    expect(page.locator(".input-card")).to_be_in_viewport()
    expect(last).to_be_in_viewport()
    fold = page.locator(".input-card summary")
    fold.click()
    expect(page.locator(".input-card dl")).to_be_hidden()
    fold.click()
    expect(page.locator(".input-card dl")).to_be_visible()
    nothing_cut_off(page, CONTROLS)
    page.close()
