"""Three Prolific workers in a real browser through a criterion with attention checks and a
comprehension check: a careful one, a click-through one, and one who fails the check."""

import re

import pytest

from annotation.models import NATURALNESS, QUALITY, Annotator, Assignment, Judgment, Screening
from annotation.screening import WORKED_PAIRS
from tests.browser.demo import OUTPUTS, demo_campaign
from tests.factories import make_item, make_output

pytestmark = pytest.mark.browser

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect

PROLIFIC_DONE = "https://app.prolific.com/submissions/complete?cc="
HITS = 3  # each worker's limit; every HIT carries a check, and 3 decide at p <= 0.10


def checked_campaign():
    """The demo's E2E outputs on three items; naturalness only, with a comprehension check,
    and a degraded copy in every HIT."""
    campaign = demo_campaign(max_hits_per_annotator=HITS, attention_check_every=1)
    systems = {system.name: system for system in campaign.systems.all()}
    for n in range(HITS - 1):
        item = make_item(campaign, external_id=f"green-man-{n}", input_key=f"green-man-{n}")
        for name, text in OUTPUTS.items():
            make_output(item, systems[name], text=text)
    campaign.criteria.filter(name=QUALITY).update(is_open=False)
    campaign.criteria.filter(name=NATURALNESS).update(comprehension_check=True)
    return campaign


def arrive(browser, live_server, pid: str):
    """A worker's browser, sent from Prolific; Prolific's own pages are answered locally
    (nothing leaves the machine), so the redirect back to it can be seen."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    page.route(
        re.compile(r"https://app\.prolific\.com/.*"),
        lambda route: route.fulfill(status=200, content_type="text/html", body="Prolific"),
    )
    query = f"PROLIFIC_PID={pid}&STUDY_ID=study-1&SESSION_ID=session-{pid}"
    page.goto(f"{live_server.url}/annotate/demo/naturalness/?{query}")
    page.get_by_role("button", name="Start").click()
    return page


def take_check(page, careful: bool) -> None:
    """Score the worked pair: the scrambled copy below its sentence, or above it."""
    expect(page.get_by_role("heading", name="A quick check before you start")).to_be_visible()
    pair = WORKED_PAIRS[NATURALNESS]
    for sentence in page.locator("fieldset.output").all():
        text = sentence.locator(".utterance").inner_text().strip()
        sentence_is_better = text == pair.sentence
        sentence.get_by_label("Score").fill("90" if sentence_is_better == careful else "30")
    page.get_by_role("button", name="Check and start").click()


def do_hits(page, careful: bool) -> None:
    """Every HIT up to the limit: a careful reader scores the garbled sentence (the one that
    is none of the systems' outputs) well below the rest; a click-through worker types 50
    everywhere."""
    originals = set(OUTPUTS.values())
    for _ in range(HITS):
        expect(page.locator("#question")).to_contain_text("native speaker")
        sentences = page.locator("fieldset.output").all()
        assert len(sentences) == len(OUTPUTS) + 1  # five outputs and one degraded copy
        for n, sentence in enumerate(sentences):
            text = sentence.locator(".utterance").inner_text().strip()
            score = (90 + n if text in originals else 10) if careful else 50
            sentence.get_by_label("Score").fill(str(score))
        page.get_by_role("button", name="Submit and continue").click()


def expect_sent_back_with(page, code: str) -> None:
    """The code shown, and the page set to go back to Prolific with it after its notice."""
    expect(page.locator("#completion-code")).to_have_text(code)
    expect(page.locator("#completion-redirect")).to_be_visible()
    refresh = page.locator('meta[http-equiv="refresh"]')
    expect(refresh).to_have_attribute(
        "content", re.compile(rf";url={re.escape(PROLIFIC_DONE)}{code}$")
    )


# Slow (about 20 s: three workers through every HIT): CI.
@pytest.mark.slow
def test_three_prolific_workers_get_the_code_their_work_earns(live_server, browser):
    campaign = checked_campaign()

    careful = arrive(browser, live_server, "careful")
    take_check(careful, careful=True)
    do_hits(careful, careful=True)
    expect_sent_back_with(careful, campaign.completion_code)

    clicker = arrive(browser, live_server, "clicker")
    take_check(clicker, careful=True)
    do_hits(clicker, careful=False)
    expect_sent_back_with(clicker, campaign.failed_completion_code)

    screened = arrive(browser, live_server, "screened")
    take_check(screened, careful=False)
    expect(screened.get_by_text("Not quite")).to_be_visible()
    take_check(screened, careful=False)
    expect(screened.locator("#failure-reason")).to_contain_text("comprehension check")
    expect_sent_back_with(screened, campaign.failed_completion_code)
    # The first worker's page has gone back to Prolific by itself meanwhile (its 10 s notice
    # ran while the others worked; waiting out each one's would add 10 s a worker).
    careful.wait_for_url(f"{PROLIFIC_DONE}{campaign.completion_code}", timeout=20_000)

    workers = {a.external_id: a for a in Annotator.objects.filter(campaign=campaign)}
    assert not workers["careful"].is_excluded and workers["careful"].attention_p <= 0.10
    assert workers["careful"].attention_checks == HITS
    assert workers["clicker"].is_excluded and workers["clicker"].failed_attention_at
    assert workers["clicker"].attention_p == 1.0
    screening = Screening.objects.get(annotator=workers["screened"])
    assert (screening.attempts, screening.passed) == (2, False)
    assert not Assignment.objects.filter(annotator=workers["screened"]).exists()

    # Both workers' HITs were saved; the ranking counts the careful one's outputs only.
    submitted = Assignment.objects.filter(status="submitted")
    assert submitted.filter(annotator=workers["careful"]).count() == HITS
    assert submitted.filter(annotator=workers["clicker"]).count() == HITS
    assert Judgment.objects.count() == 2 * HITS * (len(OUTPUTS) + 1)
    counted = Judgment.objects.counted()
    assert set(counted.values_list("assignment__annotator", flat=True)) == {workers["careful"].pk}
    assert counted.count() == HITS * len(OUTPUTS)
    for page in (careful, clicker, screened):
        page.close()
