"""Three Prolific workers through both criteria of the demo, each criterion its own Prolific
study with a comprehension check: a careful one, one who answers too fast, and one who
fails the check. Each completion page has one way out, back to Prolific with the code, and
says why where the work failed; the one who is too fast is warned before the flags add up.

With SCREENSHOTS=1 it also writes, at 1280x900 and 390x844, into docs/screenshots/:
done-{pass,too-fast,attention,comprehension,excluded}[-phone].png, speed-warning[-phone].png
quality-scoring-phone.png (a sentence being scored on a phone, the input still in view),
and not-open[-phone].png (a Prolific worker who arrives before the study opens).
"""

import os
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from annotation.identity import set_excluded
from annotation.models import Annotator, Assignment, Campaign, Screening
from annotation.screening import WORKED_PAIRS
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.demo import GREEN_MAN, OUTPUTS, demo_campaign
from tests.factories import make_campaign, make_item, make_output

pytestmark = pytest.mark.browser

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect

PROLIFIC = "https://app.prolific.com/"
PROLIFIC_DONE = f"{PROLIFIC}submissions/complete?cc="
HITS = 2  # each worker's limit per criterion
MIN_SECONDS = 20
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
SIZES = {"": DESKTOP, "-phone": PHONE}


def journey_campaign():
    """The demo's outputs on two items, both criteria with a comprehension check."""
    campaign = demo_campaign(max_hits_per_annotator=HITS, min_seconds_per_hit=MIN_SECONDS)
    systems = {system.name: system for system in campaign.systems.all()}
    item = make_item(
        campaign,
        external_id="green-man-2",
        input_data={"attributes": GREEN_MAN},
        input_key="green-man-2",
    )
    for name, text in OUTPUTS.items():
        make_output(item, systems[name], text=text)
    campaign.criteria.update(comprehension_check=True)
    return campaign


def shoot(page, name: str) -> None:
    """The page at both sizes, whole, into docs/screenshots (with SCREENSHOTS=1 only)."""
    if not os.environ.get("SCREENSHOTS"):
        return
    SHOTS.mkdir(parents=True, exist_ok=True)
    for suffix, size in SIZES.items():
        page.set_viewport_size(size)
        page.evaluate("document.activeElement.blur(); window.scrollTo(0, 0)")
        page.screenshot(path=SHOTS / f"{name}{suffix}.png", full_page=True)
    page.set_viewport_size(DESKTOP)


def arrive(page, live_server, pid: str, criterion: str) -> None:
    """Come from the criterion's Prolific study."""
    query = f"PROLIFIC_PID={pid}&STUDY_ID=study-{criterion}&SESSION_ID=session-{pid}"
    page.goto(f"{live_server.url}/annotate/demo/{criterion}/?{query}")


def new_worker(browser):
    page = browser.new_page(viewport=DESKTOP, device_scale_factor=1)
    page.set_default_timeout(10_000)
    # Prolific's pages are answered locally: nothing leaves the machine.
    page.route(
        re.compile(r"https://app\.prolific\.com/.*"),
        lambda route: route.fulfill(status=200, content_type="text/html", body="Prolific"),
    )
    return page


def take_check(page, criterion: str, careful: bool) -> None:
    expect(page.get_by_role("heading", name="A quick check before you start")).to_be_visible()
    pair = WORKED_PAIRS[criterion]
    for sentence in page.locator("fieldset.output").all():
        sentence_is_better = sentence.locator(".utterance").inner_text().strip() == pair.sentence
        sentence.get_by_label("Score").fill("90" if sentence_is_better == careful else "30")
    page.get_by_role("button", name="Check and start").click()


def score_hit(page, criterion: str) -> None:
    """Score as a careful reader: the outputs high, a garbled check sentence low."""
    originals = set(OUTPUTS.values())
    for n, sentence in enumerate(page.locator("fieldset.output").all()):
        text = sentence.locator(".utterance").inner_text().strip()
        sentence.get_by_label("Score").fill(str(90 + n if text in originals else 10))
        if criterion == "quality":
            sentence.get_by_label("reflects the input perfectly").check()


def take_time(pid: str) -> None:
    """As if the open HIT had been read for longer than the minimum."""
    earlier = timezone.now() - timedelta(seconds=MIN_SECONDS + 5)
    Assignment.objects.filter(annotator__external_id=pid, status="assigned").update(
        started_at=earlier
    )


def do_hits(page, pid: str, criterion: str, slow: bool) -> None:
    for number in range(1, HITS + 1):
        expect(page.locator(".hit-head .progress")).to_contain_text(f"page {number} of")
        if number > 1 and not slow:
            warning = page.locator(".messages li.too-fast")
            expect(warning).to_contain_text("Please slow down")
            expect(warning).to_contain_text(f"sooner than the {MIN_SECONDS} seconds")
            shoot(page, "speed-warning")
        elif slow:
            expect(page.locator(".messages li.too-fast")).to_have_count(0)
        score_hit(page, criterion)
        if slow:
            take_time(pid)
        page.get_by_role("button", name="Submit and continue").click()


def expect_one_way_out(page, code: str, reason: str = "") -> None:
    """The code, one link away (back to Prolific with it), the page going there by itself,
    and the reason where the work failed; no other task offered."""
    expect(page.locator("#completion-code")).to_have_text(code)
    links = page.locator("main a[href]")
    expect(links).to_have_count(1)
    expect(links).to_have_attribute("href", f"{PROLIFIC_DONE}{code}")
    refresh = page.locator('meta[http-equiv="refresh"]')
    expect(refresh).to_have_attribute("content", f"10;url={PROLIFIC_DONE}{code}")
    if reason:
        expect(page.locator("#failure-reason")).to_contain_text(reason)
    else:
        expect(page.locator("#failure")).to_have_count(0)


def test_three_prolific_workers_each_get_one_way_out(live_server, browser):
    campaign = journey_campaign()
    passed, failed = campaign.completion_code, campaign.failed_completion_code

    careful = new_worker(browser)
    for criterion in ("quality", "naturalness"):
        arrive(careful, live_server, "careful", criterion)
        careful.get_by_role("button", name="Start").click()
        take_check(careful, criterion, careful=True)
        if criterion == "quality":
            score_on_a_phone(careful)
        do_hits(careful, "careful", criterion, slow=True)
        expect_one_way_out(careful, passed)
    shoot(careful, "done-pass")

    hasty = new_worker(browser)
    arrive(hasty, live_server, "hasty", "quality")
    hasty.get_by_role("button", name="Start").click()
    take_check(hasty, "quality", careful=True)
    do_hits(hasty, "hasty", "quality", slow=False)
    expect_one_way_out(hasty, failed, "Too fast")
    shoot(hasty, "done-too-fast")
    arrive(hasty, live_server, "hasty", "naturalness")  # its own study: no work, the reason
    expect_one_way_out(hasty, failed, "Too fast")

    screened = new_worker(browser)
    arrive(screened, live_server, "screened", "quality")
    screened.get_by_role("button", name="Start").click()
    take_check(screened, "quality", careful=False)
    expect(screened.locator(".messages")).to_contain_text("not the right one")
    take_check(screened, "quality", careful=False)
    expect_one_way_out(screened, failed, "Failed comprehension check")
    shoot(screened, "done-comprehension")
    arrive(screened, live_server, "screened", "naturalness")
    expect_one_way_out(screened, failed, "Failed comprehension check")

    workers = {a.external_id: a for a in Annotator.objects.filter(campaign=campaign)}
    submitted = Assignment.objects.filter(status="submitted")
    careful_hits = submitted.filter(annotator=workers["careful"])
    assert careful_hits.count() == 2 * HITS and not careful_hits.exclude(flag="").exists()
    hasty_hits = submitted.filter(annotator=workers["hasty"])
    assert list(hasty_hits.values_list("flag", flat=True)) == ["too_fast"] * HITS
    assert not hasty_hits.filter(hit__criterion__name="naturalness").exists()
    screening = Screening.objects.get(annotator=workers["screened"])
    assert (screening.attempts, screening.passed) == (2, False)
    assert not Assignment.objects.filter(annotator=workers["screened"]).exists()
    for page in (careful, hasty, screened):
        page.close()

    if os.environ.get("SCREENSHOTS"):
        shoot_other_reasons(browser, live_server, workers["careful"])


def test_a_prolific_worker_early_for_a_study_is_shown_the_way_back(live_server, browser):
    make_campaign(slug="soon", status=Campaign.Status.DRAFT)
    page = new_worker(browser)
    response = page.goto(f"{live_server.url}/annotate/soon/quality/?PROLIFIC_PID=early")
    assert response.status == 404
    expect(page.get_by_role("heading", name="This study is not open yet")).to_be_visible()
    page.get_by_role("link", name="Back to Prolific").click()
    page.wait_for_url(PROLIFIC)
    page.go_back()
    shoot(page, "not-open")
    page.close()
    assert not Annotator.objects.exists()


def score_on_a_phone(page) -> None:
    """A quality HIT on a phone, a sentence half-way down being scored: the input stays at
    the top of the screen."""
    page.set_viewport_size(PHONE)
    sentences = page.locator("fieldset.output")
    sentences.nth(0).get_by_label("Score").fill("120")
    box = sentences.nth(2).get_by_label("Score")
    box.fill("80")
    box.focus()
    expect(page.locator(".input-card")).to_be_in_viewport()
    assert page.evaluate("window.scrollY") > 0  # scrolled down to the sentence, input in view
    if os.environ.get("SCREENSHOTS"):
        page.screenshot(path=SHOTS / "quality-scoring-phone.png")
    # It folds away to its heading, and back.
    fold = page.locator(".input-card summary")
    fold.click()
    expect(page.locator(".input-card dl")).to_be_hidden()
    fold.click()
    expect(page.locator(".input-card dl")).to_be_visible()
    box.fill("")
    sentences.nth(0).get_by_label("Score").fill("")
    page.set_viewport_size(DESKTOP)


def shoot_other_reasons(browser, live_server, careful: Annotator) -> None:
    """The completion pages of the reasons the journey does not reach: failed attention
    checks (the sweep's verdict, as recorded) and an organiser's exclusion."""
    for name, pid in (("attention", "careless"), ("excluded", "excluded")):
        page = new_worker(browser)
        arrive(page, live_server, pid, "quality")
        annotator = Annotator.objects.get(external_id=pid)
        if name == "attention":
            Annotator.objects.filter(pk=annotator.pk).update(failed_attention_at=timezone.now())
        set_excluded(annotator, True)
        page.goto(f"{live_server.url}/annotate/demo/quality/done/")
        reason = "Failed attention checks" if name == "attention" else "Excluded"
        expect(page.locator("#failure-reason")).to_contain_text(reason)
        shoot(page, f"done-{name}")
        page.close()
