"""Screenshots of the HIT pages for the README (opt-in: SCREENSHOTS=1 pytest -m browser).

Writes docs/screenshots/{quality,naturalness}-hit[-phone].png with the E2E-like demo data,
some numbers typed and boxes ticked, so the live ranking shows.
"""

import os
from pathlib import Path

import pytest

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.demo import demo_campaign

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.environ.get("SCREENSHOTS"), reason="set SCREENSHOTS=1 to write them"),
]
OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def open_hit(browser, live_server, criterion: str, viewport: dict, pid: str):
    page = browser.new_page(viewport=viewport, device_scale_factor=1)
    page.goto(f"{live_server.url}/annotate/demo/{criterion}/?PROLIFIC_PID={pid}")
    page.get_by_role("button", name="Start").click()
    sentences = page.locator("fieldset.output")
    for n, score in enumerate([120, 100, 60, 100]):
        sentences.nth(n).get_by_label("Score").fill(str(score))
    if criterion == "quality":
        sentences.nth(0).get_by_label("reflects the input perfectly").check()
        sentences.nth(2).get_by_label("misses some information").check()
    return page


@pytest.mark.parametrize("criterion", ["quality", "naturalness"])
def test_screenshot_hit_page(live_server, browser, criterion):
    demo_campaign(max_hits_per_annotator=5)
    OUT.mkdir(parents=True, exist_ok=True)
    for suffix, viewport in (("", DESKTOP), ("-phone", PHONE)):
        page = open_hit(browser, live_server, criterion, viewport, pid=f"shot{suffix or '-desk'}")
        page.evaluate("document.activeElement.blur(); window.scrollTo(0, 0)")
        page.screenshot(path=OUT / f"{criterion}-hit{suffix}.png", full_page=True)
        page.close()
