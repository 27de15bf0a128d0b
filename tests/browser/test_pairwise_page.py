"""A Prolific worker completes pairwise-preference HITs in headless Chromium: at 1280x900
with the mouse (two HITs, the first carrying the attention check's second comparison, one
refused submission), and at 390x844 with the keyboard only; and a best-worst page of 4. The
database then holds exactly what they chose.

With SCREENSHOTS=1 it writes docs/screenshots/pairwise-{instructions,hit,error,
best-worst}[-phone].png.
"""

import re

import pytest

from annotation.judging import clean_criterion, form_named
from annotation.models import QUALITY, Assignment, Judgment, Justification
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.demo import demo_campaign
from tests.browser.judging_pages import arrive, nothing_cut_off, shoot
from tests.factories import make_item, make_output

pytestmark = pytest.mark.browser

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect

STUDY = "study-pw"
# The controls that must fit the window.
CONTROLS = ".options label, #submit-hit, textarea, .output"
SECOND_ITEM = {
    "slug": "The Punter is a cheap French restaurant by the river.",
    "tgen": "The Punter is a restaurant serving French food at low prices near the river.",
    "tr2": "Near the river, The Punter serves cheap French food.",
    "sheff2": "The Punter is a restaurant. It is cheap.",
    "tuda": "The Punter is a French restaurant with low prices, located by the riverside.",
}


def pairwise_demo(best_worst: int = 0, **fields):
    """The demo's item and five systems and a second item, quality judged pairwise (or
    best-worst of `best_worst`)."""
    campaign = demo_campaign(outputs_per_hit=2, **fields)
    item = make_item(
        campaign,
        external_id="punter",
        input_data={
            "attributes": [["name", "The Punter"], ["food", "French"], ["area", "riverside"]]
        },
        input_key="punter",
    )
    for system in campaign.systems.all():
        make_output(item, system, text=SECOND_ITEM[system.name])
    campaign.criteria.update(comprehension_check=False)
    quality = campaign.criteria.get(name=QUALITY)
    quality.form = form_named("pairwise").name
    quality.question = "Which sentence expresses the input better, completely and correctly?"
    quality.settings = {"best_worst": best_worst} if best_worst else {}
    clean_criterion(quality)
    quality.save()
    return campaign


def side_by_side(page, selector: str = "#outputs .output") -> bool:
    """Whether the compared sentences sit in one row (else they are stacked)."""
    boxes = [card.bounding_box() for card in page.locator(selector).all()]
    assert len(boxes) >= 2
    first, second = boxes[0], boxes[1]
    if abs(first["y"] - second["y"]) < 1 and second["x"] >= first["x"] + first["width"]:
        return True
    assert second["y"] >= first["y"] + first["height"]  # stacked, not overlapping
    return False


def sentences(page, selector: str = "#outputs .output .utterance") -> list[str]:
    return [u.inner_text().strip() for u in page.locator(selector).all()]


def stored(pid: str) -> list[dict[str, float]]:
    """Per submitted page of the worker, in order: output text -> score (the attention
    check's copy under 'copy')."""
    pages = []
    for assignment in Assignment.objects.filter(
        annotator__external_id=pid, status="submitted"
    ).order_by("pk"):
        rows = Judgment.objects.filter(assignment=assignment).select_related("slot__output")
        pages.append(
            {("copy" if j.slot.degraded_text else j.slot.output.text): j.score for j in rows}
        )
    return pages


def choose(page, label: str) -> None:
    page.locator(
        ".options label", has_text=re.compile(rf"^\s*{re.escape(label)}\s*$")
    ).first.click()


@pytest.mark.django_db(transaction=True)
def test_worker_completes_pairwise_pages_with_the_mouse_at_1280x900(browser, live_server):
    pairwise_demo(max_hits_per_annotator=2, attention_check_every=2)
    page = arrive(browser, live_server, "pw-mouse", DESKTOP, STUDY)
    expect(page.get_by_role("heading", name="What you will do")).to_be_visible()
    nothing_cut_off(page, CONTROLS)
    shoot(page, "pairwise-instructions", DESKTOP)
    page.get_by_role("button", name="Start").click()
    expect(page.locator("#question")).to_have_text(
        "Which sentence expresses the input better, completely and correctly?"
    )
    expect(page.locator("#outputs .output")).to_have_count(2)
    expect(page.get_by_role("heading", name="A second comparison")).to_be_visible()
    assert side_by_side(page) and side_by_side(page, "#check-outputs .output")
    nothing_cut_off(page, CONTROLS)
    shoot(page, "pairwise-hit", DESKTOP)
    a_text, b_text = sentences(page)
    # Submitted without a choice: refused, the justification typed is kept.
    page.locator("textarea").fill("A names the food and the area.")
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.locator("#error-summary")).to_contain_text("Please correct 2 things below")
    expect(page.locator("#error-summary")).to_contain_text("Choose which sentence is better")
    expect(page.locator("textarea")).to_have_value("A names the food and the area.")
    nothing_cut_off(page, CONTROLS)
    shoot(page, "pairwise-error", DESKTOP)
    choose(page, "A is better")
    # The second comparison: the original, not its degraded copy, is better.
    left, right = sentences(page, "#check-outputs .utterance")
    original_left = left in (a_text, b_text)
    labels = [t.strip() for t in page.locator("#check-group .options label").all_inner_texts()]
    page.locator("#check-group .options label").nth(0 if original_left else 2).click()
    assert labels[1] == "Tie"
    page.get_by_role("button", name="Submit and continue").click()
    # The second page: no check; a tie.
    expect(page.locator("#outputs .output")).to_have_count(2)
    expect(page.get_by_role("heading", name="A second comparison")).to_have_count(0)
    c_text, d_text = sentences(page)
    choose(page, "Tie")
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.locator("#completion-code")).to_be_visible()
    assert stored("pw-mouse") == [
        {a_text: 1.0, b_text: 0.0, "copy": 0.0},
        {c_text: 0.5, d_text: 0.5},
    ]
    assert list(Justification.objects.values_list("text", flat=True)) == [
        "A names the food and the area."
    ]


@pytest.mark.django_db(transaction=True)
def test_worker_completes_a_pairwise_page_by_keyboard_only_at_390x844(browser, live_server):
    pairwise_demo()
    page = arrive(browser, live_server, "pw-keys", PHONE, STUDY)
    nothing_cut_off(page, CONTROLS)
    shoot(page, "pairwise-instructions", PHONE)
    start = page.get_by_role("button", name="Start")
    while not start.evaluate("el => el === document.activeElement"):
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#outputs .output")).to_have_count(2)
    assert not side_by_side(page)  # stacked on a phone
    nothing_cut_off(page, CONTROLS)
    shoot(page, "pairwise-hit", PHONE)
    a_text, b_text = sentences(page)
    first = page.locator("input[name=choice]").first
    while not first.evaluate("el => el === document.activeElement"):
        page.keyboard.press("Tab")
    page.keyboard.press("Space")  # A is better ...
    page.keyboard.press("ArrowRight")  # ... no: a tie ...
    page.keyboard.press("ArrowRight")  # ... no: B is better.
    expect(page.locator("input[name=choice][value=b]")).to_be_checked()
    page.keyboard.press("Tab")
    expect(page.locator("textarea")).to_be_focused()
    page.keyboard.type("B is shorter but says it all.")
    submit = page.get_by_role("button", name="Submit and continue")
    while not submit.evaluate("el => el === document.activeElement"):
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#completion-code")).to_be_visible()
    assert stored("pw-keys") == [{a_text: 0.0, b_text: 1.0}]
    assert Justification.objects.get().text == "B is shorter but says it all."


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_worker_chooses_the_best_and_the_worst_of_four(browser, live_server, size):
    pairwise_demo(best_worst=4)
    page = arrive(browser, live_server, f"bw-{size['width']}", size, STUDY)
    page.get_by_role("button", name="Start").click()
    expect(page.locator("#outputs .output")).to_have_count(4)
    nothing_cut_off(page, CONTROLS)
    texts = sentences(page)
    best = page.locator("#best-group .options label")
    worst = page.locator("#worst-group .options label")
    best.nth(1).click()
    worst.nth(1).click()  # the same: refused, the choices kept
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.locator("#error-summary")).to_contain_text("two different sentences")
    expect(page.locator("#best-group input").nth(1)).to_be_checked()
    nothing_cut_off(page, CONTROLS)
    shoot(page, "pairwise-best-worst", size)
    page.locator("#worst-group .options label").nth(3).click()
    page.get_by_role("button", name="Submit and continue").click()
    expect(page.locator("#completion-code")).to_be_visible()
    assert stored(f"bw-{size['width']}") == [
        {texts[0]: 0.5, texts[1]: 1.0, texts[2]: 0.5, texts[3]: 0.0}
    ]
