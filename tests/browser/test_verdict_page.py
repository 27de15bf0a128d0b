"""The results page as an organiser first meets it: it opens on the calibrated verdict, and a
published procedure's tab says what it is, how often it orders identical systems on this
campaign's own design, and where it and the verdict differ; at 1280x900 and on a phone.

SCREENSHOTS=1 writes the screenshots to docs/screenshots/ (results-verdict[-phone].png,
results-published[-phone].png); otherwise to the test's own folder."""

import os
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse

from ranking.models import RankingRun
from ranking.service import execute_run
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_screenshots import log_in
from tests.factories import make_annotator, make_judged_hit, make_system_set

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PAGE_WIDTH = "() => [document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"


def judged_campaign():
    """Six systems over 40 items, 3 annotators a page: sys1 clearly ahead, sys6 clearly
    behind, the four between close."""
    rng = np.random.default_rng(3)
    campaign, systems, items = make_system_set(systems=6, items=40)
    annotators = [make_annotator(campaign) for _ in range(6)]
    strength = np.array([1.2, 0.2, 0.15, 0.1, 0.0, -1.2])
    for item in items:
        outputs = list(item.outputs.order_by("system__name"))
        quality = strength + rng.normal(0, 0.5, 6)
        for annotator in rng.choice(annotators, 3, replace=False):
            seen = quality + rng.normal(0, 0.5, 6)
            make_judged_hit(outputs, [int(100 * np.exp(0.5 * s)) for s in seen], annotator)
    return campaign


def run_view(campaign, protocol: str) -> RankingRun:
    run = RankingRun.objects.create(
        campaign=campaign,
        criterion=campaign.criteria.get(name="quality"),
        protocol=protocol,
        repetitions=200,
        seed=1,
    )
    execute_run(run)
    run.refresh_from_db()
    return run


def test_results_page_opens_on_the_verdict_and_a_published_tab_says_what_it_is(
    live_server, browser, settings, tmp_path
):
    settings.RANKING_NULL_CHECK_PERMUTATIONS = 20
    campaign = judged_campaign()
    verdict = run_view(campaign, "calibrated")
    published = run_view(campaign, "e2e")
    assert published.null_permutations == 20
    folder = SCREENSHOTS if os.environ.get("SCREENSHOTS") else tmp_path
    url = live_server.url + reverse("ranking:results", args=[campaign.slug, "quality"])
    page = log_in(browser, live_server, DESKTOP)
    for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
        page.set_viewport_size(size)
        page.goto(url)
        assert page.locator("a.current", has_text="Calibrated verdict").first.is_visible()
        rows = page.locator("table.ranking tbody tr")
        assert rows.count() == 6 and "sys1" in rows.first.inner_text()
        assert page.locator("#power").is_visible()
        claimed = sum(1 for row in verdict.pairs["rows"] if row[5])
        assert f"{claimed} of 15 pairs of systems are told apart" in page.inner_text("#power")
        assert page.evaluate(PAGE_WIDTH)[0] <= page.evaluate(PAGE_WIDTH)[1]
        page.screenshot(path=str(folder / f"results-verdict{suffix}.png"), full_page=True)
        page.goto(f"{url}?protocol=e2e")
        card = page.locator("#published")
        assert card.is_visible()
        assert "Published procedure: E2E NLG Challenge 2018" in card.inner_text()
        share = round(100 * published.null_ordered / published.null_permutations)
        assert f"orders identical systems in {share}%" in " ".join(card.inner_text().split())
        assert page.evaluate(PAGE_WIDTH)[0] <= page.evaluate(PAGE_WIDTH)[1]
        page.screenshot(path=str(folder / f"results-published{suffix}.png"), full_page=True)
    page.close()
