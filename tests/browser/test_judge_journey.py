"""An organiser, in Chromium, adds an automatic judge to a criterion in the admin, switches
the criterion to humans + judge, has the judge score the outputs, reads its agreement with
the crowd on the judge's page and the fused ranking beside the humans-only one on the
results page (issue 29's journey). The judge's job and the fused run are run here as the
worker runs them (tests/judges/test_celery.py runs them in a real worker)."""

import os
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judges.models import Judge, JudgeJob
from judges.service import run_judge_job
from ranking.batch import execute_queued_runs
from ranking.models import RankingRun
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_screenshots import log_in
from tests.factories import make_annotator, make_judged_hit, make_system_set

pytestmark = pytest.mark.browser

PAGE_OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
# The readonly tables whose right edge is past the window with no box of theirs to scroll.
TABLES_CUT_OFF = """() => Array.from(document.querySelectorAll(".readonly table"))
  .filter((table) => table.getBoundingClientRect().right > window.innerWidth)
  .filter((table) => getComputedStyle(table.parentElement).overflowX !== "auto")
  .map((table) => table.closest(".form-row").className)"""
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# Each output realises some of its item's three slots (name, eatType, area): better
# systems realise more, on average. The crowd scores an output by the slots it realises, with
# noise; the judge is minus its slot error rate, so it tracks the crowd within systems too.
SENTENCES = ("{name}.", "{name} is a pub.", "{name} is a pub by the riverside.")
SLOT_ODDS = {"sys1": 0.9, "sys2": 0.7, "sys3": 0.5, "sys4": 0.3}


def judged_campaign():
    campaign, systems, items = make_system_set(systems=4, items=16)
    rng = np.random.default_rng(7)
    annotators = [make_annotator(campaign) for _ in range(3)]
    for n, item in enumerate(items):
        name = item.input_data["attributes"][0][1]
        outputs, quality = [], []
        for system in systems:
            slots = 1 + rng.binomial(2, SLOT_ODDS[system.name])
            output = item.outputs.get(system=system)
            output.text = SENTENCES[slots - 1].format(name=name)
            output.save(update_fields=["text"])
            outputs.append(output)
            quality.append(round(25 * slots + rng.normal(0, 8)))
        if n % 4:  # a quarter of the items left to the judge alone
            make_judged_hit(outputs, quality, annotators[n % 3])
    return campaign


def shoot(page, name: str) -> None:
    if os.environ.get("SCREENSHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SHOTS / f"{name}.png", full_page=True)


def test_organiser_adds_a_judge_reads_its_agreement_and_the_fused_ranking(live_server, browser):
    campaign = judged_campaign()
    page = log_in(browser, live_server, DESKTOP)
    page.goto(live_server.url + reverse("admin:judges_judge_add"))
    page.get_by_label("Criterion:").select_option(label=str(campaign.criteria.get(name="quality")))
    page.get_by_label("Name:").fill("ser")
    page.get_by_label("Kind:").select_option("metric")
    page.get_by_label("Settings:").fill('{"metric": "ser"}')
    page.get_by_label("Fused").check()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist .success")).to_contain_text("was added successfully")
    judge = Judge.objects.get(name="ser")
    assert judge.fused and judge.criterion.name == "quality"

    page.locator("#result_list input[name='_selected_action']").first.check()
    page.locator("select[name='action']").select_option("score_outputs")
    page.get_by_role("button", name="Go").click()
    expect(page.locator(".messagelist")).to_contain_text("1 job(s) queued for 64 outputs")
    # What the worker does with the job, then with the fused run the job's end queues.
    assert run_judge_job(JudgeJob.objects.get(judge=judge))
    for run in RankingRun.objects.filter(protocol="fused", status="queued"):
        execute_queued_runs(run)
    assert judge.scores.count() == 64

    page.goto(live_server.url + reverse("admin:judges_judge_change", args=[judge.pk]))
    agreement = page.locator(".field-agreement_with_the_crowd")
    expect(agreement).to_contain_text("Spearman's rho of the systems' means")
    expect(agreement).to_contain_text("human-judged pairs the judge orders as the human did")
    expect(page.locator(".field-bias_per_system")).to_contain_text("sys4")
    shoot(page, "judge-agreement")

    results = reverse("ranking:results", args=[campaign.slug, "quality"])
    page.goto(f"{live_server.url}{results}?protocol=fused")
    table = page.locator("#fused-table tbody tr")
    expect(table).to_have_count(4)
    expect(table.first).to_contain_text("sys1")
    expect(page.locator("#judge-agreement")).to_contain_text("Pearson's r over outputs")
    shoot(page, "results-fused-judge")
    page.set_viewport_size(PHONE)
    shoot(page, "results-fused-judge-phone")
    page.goto(live_server.url + reverse("admin:judges_judge_change", args=[judge.pk]))
    # The judge's tables scroll in their own boxes where wider than the phone: none is cut off.
    assert page.evaluate(PAGE_OVERFLOW) <= 0
    assert page.evaluate(TABLES_CUT_OFF) == []
    shoot(page, "judge-agreement-phone")
    page.close()
