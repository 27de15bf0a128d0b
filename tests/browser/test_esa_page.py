"""A Prolific worker completes an error-span annotation (ESA) HIT in headless Chromium:
marking two spans (one minor, one major) and scoring both outputs, at 1280x900 with the
mouse and at 390x844 with the keyboard only. Every output starts with an emoji (an astral
character, two UTF-16 units): the database must hold exactly the spans marked, in Python's
code points.

A third worker marks a span on a phone by touch (a selection with no mouse events).

With SCREENSHOTS=1 it writes docs/screenshots/esa-{instructions,hit,error}[-phone].png and
esa-touch-phone.png.
"""

import re

import pytest

from annotation.judging import clean_criterion, form_named
from annotation.models import QUALITY, Assignment, ErrorSpan, Judgment, Output
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.demo import demo_campaign
from tests.browser.judging_pages import arrive, nothing_cut_off, shoot

pytestmark = pytest.mark.browser

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect

STUDY = "study-esa"
# The controls that must fit the window.
CONTROLS = "input[type=range], .value-box input, #submit-hit, .mark-row button, .esa-text"
EMOJI = "🍺 "


def esa_demo():
    """The demo's item and five systems, 2 outputs a page, quality judged with ESA; each
    output starts with an emoji."""
    campaign = demo_campaign(outputs_per_hit=2, max_hits_per_annotator=1)
    quality = campaign.criteria.get(name=QUALITY)
    quality.form = form_named("esa").name
    quality.comprehension_check = False
    quality.question = "How good is this description of the input? Mark its errors, then score it."
    clean_criterion(quality)
    quality.save()
    for output in Output.objects.filter(item__campaign=campaign):
        output.text = EMOJI + output.text
        output.save()
    return campaign


def word_span(text: str, n: int) -> tuple[int, int]:
    """Code-point offsets of the n-th whitespace token of `text` (0: the emoji)."""
    tokens = list(re.finditer(r"\S+", text))
    return tokens[n].start(), tokens[n].end()


# The point (x, y) of a code-point offset in an ESA text: its left edge, or with `end`
# the right edge of the character before it.
POINT_JS = """(el, [offset, end]) => {
  const text = el.textContent;
  const u16 = Array.from(text).slice(0, offset).join("").length;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let seen = 0, node;
  while ((node = walker.nextNode())) {
    const size = node.data.length;
    const at = end ? u16 - 1 : u16;
    if (at < seen + size) {
      const range = document.createRange();
      range.setStart(node, at - seen); range.setEnd(node, at - seen + 1);
      const box = range.getClientRects()[0];
      return [end ? box.right - 1 : box.left + 1, box.top + box.height / 2];
    }
    seen += size;
  }
  return null;
}"""


def drag_select(page, text_box, start: int, end: int) -> None:
    text_box.scroll_into_view_if_needed()
    x1, y1 = text_box.evaluate(POINT_JS, [start, False])
    x2, y2 = text_box.evaluate(POINT_JS, [end, True])
    page.mouse.move(x1, y1)
    page.mouse.down()
    page.mouse.move((x1 + x2) / 2, (y1 + y2) / 2, steps=3)
    page.mouse.move(x2, y2, steps=3)
    page.mouse.up()


def sentences(page) -> list[tuple[str, object]]:
    return [
        (s.locator(".esa-text").text_content(), s) for s in page.locator("fieldset.output").all()
    ]


def stored(pid: str) -> dict[str, tuple[float, list[tuple[int, int, str]]]]:
    """Output text -> (score, spans) of the worker's submitted page."""
    assignment = Assignment.objects.get(annotator__external_id=pid, status="submitted")
    found = {}
    for j in Judgment.objects.filter(assignment=assignment).select_related("slot__output"):
        spans = ErrorSpan.objects.filter(judgment=j).order_by("start")
        found[j.slot.output.text] = (j.score, list(spans.values_list("start", "end", "severity")))
    return found


@pytest.mark.django_db(transaction=True)
def test_worker_marks_two_spans_and_scores_with_the_mouse_at_1280x900(browser, live_server):
    esa_demo()
    page = arrive(browser, live_server, "esa-mouse", DESKTOP, STUDY)
    expect(page.get_by_role("heading", name="What you will do")).to_be_visible()
    shoot(page, "esa-instructions", DESKTOP)
    page.get_by_role("button", name="Start").click()
    expect(page.locator(".esa-text")).to_have_count(2)
    nothing_cut_off(page, CONTROLS)
    (first_text, first), (second_text, second) = sentences(page)
    assert first_text.startswith(EMOJI)  # what the page shows is the output's text
    minor = word_span(first_text, 2)
    major = word_span(second_text, 4)
    drag_select(page, first.locator(".esa-text"), *minor)
    first.get_by_role("button", name="Minor error").click()
    drag_select(page, second.locator(".esa-text"), *major)
    second.get_by_role("button", name="Major error").click()
    expect(first.locator(".err-minor")).to_have_text(first_text[minor[0] : minor[1]])
    expect(second.locator(".err-major")).to_have_text(second_text[major[0] : major[1]])
    expect(first.locator(".span-list li")).to_have_count(1)
    # Only the first sentence scored: refused, and the spans and the score are still there.
    first.locator(".value-box input").fill("70")
    shoot(page, "esa-hit", DESKTOP)
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.locator("#error-summary")).to_contain_text("Please correct 1 thing below")
    expect(page.locator("#error-summary")).to_contain_text("it has no score yet")
    (_, first), (_, second) = sentences(page)
    expect(first.locator(".err-minor")).to_have_text(first_text[minor[0] : minor[1]])
    expect(second.locator(".err-major")).to_have_text(second_text[major[0] : major[1]])
    expect(first.locator(".value-box input")).to_have_value("70")
    nothing_cut_off(page, CONTROLS)
    shoot(page, "esa-error", DESKTOP)
    slider = second.locator("input[type=range]")
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.25, box["y"] + box["height"] / 2)
    value = int(slider.input_value())
    assert 10 <= value <= 40
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.locator("#completion-code")).to_be_visible()
    assert stored("esa-mouse") == {
        first_text: (70.0, [(*minor, "minor")]),
        second_text: (float(value), [(*major, "major")]),
    }


def press_until_focused(page, locator) -> None:
    for _ in range(60):
        if locator.evaluate("el => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError("never reached by Tab")


@pytest.mark.django_db(transaction=True)
def test_worker_marks_two_spans_and_scores_by_keyboard_only_at_390x844(browser, live_server):
    esa_demo()
    page = arrive(browser, live_server, "esa-keys", PHONE, STUDY)
    nothing_cut_off(page, CONTROLS)
    shoot(page, "esa-instructions", PHONE)
    press_until_focused(page, page.get_by_role("button", name="Start"))
    page.keyboard.press("Enter")
    expect(page.locator(".esa-text")).to_have_count(2)
    nothing_cut_off(page, CONTROLS)
    (first_text, first), (second_text, second) = sentences(page)
    minor = word_span(first_text, 1)
    major = word_span(second_text, 3)
    # The first: arrows to the word, Shift+arrows over it, the key 1 (minor).
    press_until_focused(page, first.locator(".esa-text"))
    page.keyboard.press("Home")
    for _ in range(minor[0]):
        page.keyboard.press("ArrowRight")
    for _ in range(minor[1] - minor[0]):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("1")
    # The second: Ctrl+arrows by word, then Tab to the "Major error" button.
    press_until_focused(page, second.locator(".esa-text"))
    page.keyboard.press("Home")
    for _ in range(3):
        page.keyboard.press("Control+ArrowRight")
    for _ in range(major[1] - major[0]):
        page.keyboard.press("Shift+ArrowRight")
    press_until_focused(page, second.get_by_role("button", name="Major error"))
    page.keyboard.press("Enter")
    expect(first.locator(".err-minor")).to_have_text(first_text[minor[0] : minor[1]])
    expect(second.locator(".err-major")).to_have_text(second_text[major[0] : major[1]])
    values = {}
    for text, sentence in ((first_text, first), (second_text, second)):
        slider = sentence.locator("input[type=range]")
        press_until_focused(page, slider)
        value = 40 if sentence is first else 15
        page.keyboard.press("Home")
        for _ in range(value):
            page.keyboard.press("ArrowRight")
        expect(slider).to_have_value(str(value))
        values[text] = float(value)
    nothing_cut_off(page, CONTROLS)
    shoot(page, "esa-hit", PHONE)
    press_until_focused(page, page.get_by_role("button", name="Submit and continue"))
    page.keyboard.press("Enter")
    expect(page.locator("#completion-code")).to_be_visible()
    assert stored("esa-keys") == {
        first_text: (values[first_text], [(*minor, "minor")]),
        second_text: (values[second_text], [(*major, "major")]),
    }


# Select code points [start, end) of an ESA text as a phone's long press and its handles do:
# the browser's selection changes, with no mouse events.
SELECT_JS = """(el, [start, end]) => {
  const text = el.textContent, u16 = (cp) => Array.from(text).slice(0, cp).join("").length;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), at = [];
  let seen = 0, node;
  while ((node = walker.nextNode())) {
    for (const wanted of [u16(start), u16(end)]) {
      if (wanted >= seen && wanted <= seen + node.data.length) at.push([node, wanted - seen]);
    }
    seen += node.data.length;
  }
  const [[a, aOffset]] = at, [b, bOffset] = at[at.length - 1];
  document.getSelection().setBaseAndExtent(a, aOffset, b, bOffset);
}"""


@pytest.mark.django_db(transaction=True)
def test_worker_marks_a_span_by_touch_on_a_phone(browser, live_server):
    esa_demo()
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    query = f"PROLIFIC_PID=esa-touch&STUDY_ID={STUDY}&SESSION_ID=session-esa-touch"
    page.goto(f"{live_server.url}/annotate/demo/quality/?{query}")
    page.get_by_role("button", name="Start").tap()
    expect(page.locator(".esa-text")).to_have_count(2)
    (first_text, first), _ = sentences(page)
    minor = word_span(first_text, 2)
    first.locator(".esa-text").evaluate(SELECT_JS, list(minor))
    button = first.get_by_role("button", name="Minor error")
    expect(button).to_be_enabled()
    button.tap()
    expect(first.locator(".err-minor")).to_have_text(first_text[minor[0] : minor[1]])
    expect(first.locator(".span-list li")).to_have_count(1)
    shoot(page, "esa-touch", PHONE)
    spans = first.locator("input[data-spans]").input_value()
    assert f'"start":{minor[0]},"end":{minor[1]},"severity":"minor"' in spans.replace(" ", "")
    context.close()
