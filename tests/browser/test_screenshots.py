"""Screenshots for the docs (opt-in: SCREENSHOTS=1 pytest -m browser).

- docs/screenshots/{quality,naturalness}-hit[-phone].png: the HIT pages with the E2E-like demo
  data, some numbers typed and boxes ticked, so the live ranking shows.
- docs/screenshots/results-e2e-{quality,bt,wmt}.png: the results page on the released E2E
  quality ratings, in the TrueSkill (E2E protocol), Bradley-Terry and WMT views, from the top
  of the page to the recompute form; the automatic metrics section, the same in every view
  but for its score column, is left out of these and has its own:
- docs/screenshots/results-e2e-metrics.png: that section beside the E2E protocol's clusters,
  with the correlations and scatter plots (METEOR, ROUGE-L and CIDEr need Java).
- docs/screenshots/results-fused.png: the fused view (humans + judge, PPI++) of a simulated
  campaign ranked three times as its judgments came in, its intervals narrowing.

The results screenshots need ../shared (the E2E data) and take a few minutes, most of it the
metrics of 21 systems over 630 items.
"""

import os
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Campaign
from judges.models import Judge, JudgeScore
from ranking.automatic_metrics.models import MetricRun
from ranking.automatic_metrics.service import execute_metric_run
from ranking.metrics import coco
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.demo import demo_campaign
from tests.factories import (
    make_annotator,
    make_assignment,
    make_hit,
    make_judged_hit,
    make_system_set,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.environ.get("SCREENSHOTS"), reason="set SCREENSHOTS=1 to write them"),
]
OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# The width of the results page's column (960 px) with a margin, as docs/rankings.md shows it.
RESULTS = {"width": 1100, "height": 900}
# Repetitions as docs/rankings.md's figures: 200 TrueSkill runs as E2E, 1,000 resamples for Arena's
# intervals; WMT's view has nothing to repeat.
REPETITIONS = {"e2e": 200, "bt": 1000, "wmt": 1}


def open_hit(browser, live_server, criterion: str, viewport: dict, pid: str):
    page = browser.new_page(viewport=viewport, device_scale_factor=1)
    page.goto(f"{live_server.url}/annotate/demo/{criterion}/?PROLIFIC_PID={pid}")
    page.get_by_role("button", name="Start").click()
    sentences = page.locator("fieldset.output")
    for n, score in enumerate([120, 100, 60, 100]):
        sentences.nth(n).get_by_label("Score").fill(str(score))
    if criterion == "quality":
        for n in (0, 1):
            sentences.nth(n).get_by_label("reflects the input perfectly").check()
        for n in (2, 3):
            sentences.nth(n).get_by_label("misses some information").check()
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


def e2e_campaign(e2e_data: Path) -> Campaign:
    """The published E2E test set, the 21 primary systems' outputs and the quality ratings,
    ranked in three protocols and scored by the automatic metrics, as the README loads them."""
    call_command("import_items", "e2e", str(e2e_data / "testset_w_refs.csv"), "--create-campaign")
    for path in sorted((e2e_data / "outputs").glob("*.tsv")):
        call_command("import_outputs", "e2e", path.stem, str(path), "--create-system")
    call_command("import_ratings", "e2e", str(e2e_data / "human_ratings" / "quality.csv"))
    campaign = Campaign.objects.get(slug="e2e")
    for protocol, repetitions in REPETITIONS.items():
        run = RankingRun.objects.create(
            campaign=campaign,
            criterion=campaign.criteria.get(name="quality"),
            protocol=protocol,
            repetitions=repetitions,
            seed=0,
        )
        assert execute_run(run)
        run.refresh_from_db()
        assert run.status == RankingRun.Status.DONE, run.error
    metrics = MetricRun.objects.create(campaign=campaign)
    assert execute_metric_run(metrics)
    metrics.refresh_from_db()
    assert metrics.status == MetricRun.Status.DONE and metrics.missing == {}, metrics.error
    return campaign


def log_in(browser, live_server, viewport: dict):
    """A page logged in as an organiser, through the admin's login form."""
    User.objects.create_superuser("organiser", "organiser@example.org", "screenshots")
    page = browser.new_page(viewport=viewport, device_scale_factor=1)
    page.goto(f"{live_server.url}{reverse('admin:login')}")
    page.get_by_label("Username").fill("organiser")
    page.get_by_label("Password").fill("screenshots")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}{reverse('admin:index')}")
    return page


def test_screenshot_results_page(live_server, browser, e2e_data):
    if reason := coco.java_missing():
        pytest.skip(f"METEOR, ROUGE-L and CIDEr as E2E computed them {reason}")
    campaign = e2e_campaign(e2e_data)
    OUT.mkdir(parents=True, exist_ok=True)
    page = log_in(browser, live_server, RESULTS)
    url = live_server.url + reverse("ranking:results", args=[campaign.slug, "quality"])
    names = {"e2e": "quality", "bt": "bt", "wmt": "wmt"}
    for protocol, name in names.items():
        page.goto(f"{url}?protocol={protocol}")
        assert page.locator(".card.error").count() == 0, page.locator(
            ".card.error"
        ).all_inner_texts()
        assert page.locator("table.ranking tbody tr").first.is_visible()
        if protocol == "e2e":
            section = page.locator("#metrics")
            assert section.locator(".scatters figure").count() > 0
            section.screenshot(path=OUT / "results-e2e-metrics.png")
        page.locator("#metrics").evaluate("section => { section.style.display = 'none'; }")
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=OUT / f"results-e2e-{name}.png", full_page=True)
    page.close()


def test_screenshot_results_page_fused(live_server, browser):
    """Six systems, a judge that tracks the crowd with noise, and three fused runs as the
    crowd judges a third of the items at a time."""
    rng = np.random.default_rng(29)
    campaign, systems, items = make_system_set(systems=6, items=60)
    criterion = campaign.criteria.get(name="quality")
    judge = Judge.objects.create(criterion=criterion, name="gpt-judge", kind="metric", fused=True)
    annotators = [make_annotator(campaign) for _ in range(4)]
    quality = {item.pk: np.linspace(75, 45, 6) + rng.normal(0, 10, 6) for item in items}
    for item in items:
        for system, q in zip(systems, quality[item.pk], strict=True):
            output = item.outputs.get(system=system)
            JudgeScore.objects.create(judge=judge, output=output, score=q + rng.normal(0, 6))
    for third in range(3):
        for n, item in enumerate(items[third * 12 : (third + 1) * 12]):
            outputs = [item.outputs.get(system=s) for s in systems]
            scores = np.clip(np.round(quality[item.pk] + rng.normal(0, 8, 6)), 0, 100)
            make_judged_hit(outputs, list(scores), annotators[n % 4])
        run = RankingRun.objects.create(campaign=campaign, criterion=criterion, protocol="fused")
        execute_run(run)
    OUT.mkdir(parents=True, exist_ok=True)
    page = log_in(browser, live_server, RESULTS)
    url = live_server.url + reverse("ranking:results", args=[campaign.slug, "quality"])
    page.goto(f"{url}?protocol=fused")
    assert page.locator("#fused-table tbody tr").count() == 6
    assert page.locator("#width-chart").is_visible()
    page.screenshot(path=OUT / "results-fused.png", full_page=True)
    page.close()


def test_screenshot_monitor_page(live_server, browser):
    """The live monitor of a campaign part way through: a day of HITs at a varying rate."""
    campaign = demo_campaign(target_hits=400, pay_per_hit=Decimal("0.15"))
    outputs = list(campaign.items.first().outputs.all())
    now = timezone.now()
    for n in range(180):
        assignment = make_judged_hit(outputs, [100, 80, 60, 40, 20][: len(outputs)])
        end = now - timedelta(minutes=7 * n * (1 + n % 3) / 2)
        flag = "too_fast" if n % 11 == 0 else ""
        started = end - timedelta(seconds=45 + n % 40)
        Assignment.objects.filter(pk=assignment.pk).update(
            started_at=started, submitted_at=end, flag=flag
        )
    for _ in range(6):
        make_assignment(make_hit(outputs))
    OUT.mkdir(parents=True, exist_ok=True)
    page = log_in(browser, live_server, RESULTS)
    page.goto(live_server.url + reverse("admin:annotation_campaign_monitor", args=[campaign.pk]))
    assert page.locator("#progress-quality").is_visible()
    page.screenshot(path=OUT / "monitor.png", full_page=True)
    page.close()
