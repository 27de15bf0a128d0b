"""A Prolific worker does one HIT of each criterion in a real browser."""

import re

import pytest

from annotation.models import Annotator, Assignment, Judgment, Output
from tests.browser.demo import demo_campaign

pytestmark = pytest.mark.browser

QUALITY_SCORES = [150, 100, 80, 40, 100]
NATURALNESS_SCORES = [90, 120, 120, 30, 100]


# Where the playwright package is missing the module skips, as the browser fixture would.
expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect


def fill_scores(page, scores) -> dict[str, int]:
    """Type a score into each sentence, in page order; return {sentence text: score}."""
    typed = {}
    sentences = page.locator("fieldset.output")
    for n, score in enumerate(scores):
        sentence = sentences.nth(n)
        sentence.get_by_label("Score").fill(str(score))
        typed[sentence.locator(".utterance").inner_text().strip()] = score
    return typed


def saved_judgments(criterion: str) -> dict[str, tuple]:
    judgments = Judgment.objects.filter(assignment__hit__criterion__name=criterion).select_related(
        "slot__output"
    )
    return {
        j.slot.output.text: (
            j.score,
            j.adds_information,
            j.misses_information,
            j.reflects_perfectly,
        )
        for j in judgments
    }


def do_quality_hit(page) -> dict[str, tuple]:
    expect(page.get_by_role("heading", name="A worked example")).to_be_visible()
    page.get_by_role("button", name="Start").click()
    expect(page.locator("#question")).to_contain_text("overall quality of the utterance")
    expect(page.locator(".input-card")).to_contain_text("Express by Holiday Inn")
    typed = fill_scores(page, ["abc", *QUALITY_SCORES[1:]])
    sentences = page.locator("fieldset.output")
    for n in (0, 1, 4):
        sentences.nth(n).get_by_label("reflects the input perfectly").check()
    sentences.nth(3).get_by_label("misses some information").check()
    sentences.nth(3).get_by_label("contains additional information").check()
    page.get_by_role("button", name="Submit and continue").click()
    # The server refuses the bad number and the sentence without a coverage box, and keeps
    # everything else that was typed.
    expect(page.locator("#error-summary")).to_contain_text("Sentence A: Enter a number")
    expect(page.locator("#error-summary")).to_contain_text("Sentence C: Tick at least one box")
    expect(sentences.nth(1).get_by_label("Score")).to_have_value(str(QUALITY_SCORES[1]))
    expect(sentences.nth(3).get_by_label("misses some information")).to_be_checked()
    typed = fill_scores(page, QUALITY_SCORES)
    sentences.nth(2).get_by_label("misses some information").check()
    ranking = page.locator("#ranking-list")
    expect(ranking.locator("li").first).to_contain_text("Sentence A")
    expect(ranking).to_contain_text("Standard")
    expect(ranking.locator("li").nth(1)).to_contain_text("(tied)")
    page.get_by_role("button", name="Submit and continue").dblclick()  # saved once
    expect(page.locator("#completion-code")).to_be_visible()
    coverage = {2: (False, True, False), 3: (True, True, False)}
    return {
        text: (score, *coverage.get(n, (False, False, True)))
        for n, (text, score) in enumerate(typed.items())
    }


def do_naturalness_hit_by_keyboard(page) -> dict[str, tuple]:
    # Its own Prolific study; the browser remembers the worker.
    page.goto(page.url.split("/annotate/")[0] + "/annotate/demo/naturalness/")
    expect(page.get_by_role("heading", name="A worked example")).to_be_visible()
    page.get_by_role("button", name="Start").click()
    expect(page.locator("#question")).to_contain_text("native speaker")
    expect(page.locator(".input-card")).to_have_count(0)
    expect(page.locator("fieldset.coverage")).to_have_count(0)
    for _ in range(20):  # Tab from the top of the page to the first score field
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == "score_1":
            break
    texts = page.locator("fieldset.output .utterance").all_inner_texts()
    for n, score in enumerate(NATURALNESS_SCORES):
        page.keyboard.type(str(score))
        if n < len(NATURALNESS_SCORES) - 1:
            page.keyboard.press("Tab")
    expect(page.locator("#ranking-list li").first).to_contain_text("(tied)")
    page.keyboard.press("Enter")  # from the last box to the button
    expect(page.get_by_role("button", name="Submit and continue")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#completion-code")).to_be_visible()
    return {
        text.strip(): (score, False, False, False)
        for text, score in zip(texts, NATURALNESS_SCORES, strict=True)
    }


def test_prolific_worker_completes_a_hit_of_each_criterion(live_server, browser):
    campaign = demo_campaign()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    query = "PROLIFIC_PID=5f0c1d2e3b4a&STUDY_ID=st-1&SESSION_ID=se-1"
    page.goto(f"{live_server.url}/annotate/demo/quality/?{query}")
    quality = do_quality_hit(page)
    naturalness = do_naturalness_hit_by_keyboard(page)

    code = campaign.completion_code
    expect(page.locator("#completion-code")).to_have_text(code)
    link = page.get_by_role("link", name=re.compile("Return to Prolific"))
    expect(link).to_have_attribute(
        "href", f"https://app.prolific.com/submissions/complete?cc={code}"
    )
    page.close()

    annotator = Annotator.objects.get()
    assert (annotator.source, annotator.external_id) == ("prolific", "5f0c1d2e3b4a")
    assert annotator.study_data == {"study_id": "st-1", "session_id": "se-1"}
    assert Assignment.objects.filter(status="submitted", annotator=annotator).count() == 2
    assert Judgment.objects.count() == 10
    assert saved_judgments("quality") == quality
    assert saved_judgments("naturalness") == naturalness
    assert set(quality) == set(Output.objects.values_list("text", flat=True))
