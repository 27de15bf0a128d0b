"""What the browser tests of the judgment forms' pages share (test_da_page.py,
test_pairwise_page.py, test_esa_page.py): a Prolific worker's arrival, the screenshots, the
check that nothing is cut off at the window's right edge."""

import os
from pathlib import Path

from tests.browser.conftest import PHONE

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def shoot(page, name: str, size: dict) -> None:
    """With SCREENSHOTS=1, docs/screenshots/{name}[-phone].png of the whole page."""
    if not os.environ.get("SCREENSHOTS"):
        return
    SHOTS.mkdir(parents=True, exist_ok=True)
    suffix = "-phone" if size == PHONE else ""
    page.screenshot(path=SHOTS / f"{name}{suffix}.png", full_page=True)


def arrive(browser, live_server, pid: str, size: dict, study: str):
    """A new page at `size` on the demo campaign's quality entry, as Prolific's worker `pid`
    of `study`."""
    page = browser.new_page(viewport=size, device_scale_factor=1)
    page.set_default_timeout(10_000)
    query = f"PROLIFIC_PID={pid}&STUDY_ID={study}&SESSION_ID=session-{pid}"
    page.goto(f"{live_server.url}/annotate/demo/quality/?{query}")
    return page


def nothing_cut_off(page, controls: str) -> None:
    """No element reaches past the right edge of the window, so nothing needs a sideways
    scroll (the input's tables scroll inside their own box), and none of the `controls`
    (a selector) either."""
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    for box in page.locator(controls).all():
        right = box.evaluate("el => el.getBoundingClientRect().right")
        assert right <= page.viewport_size["width"]
