"""A HIT of each published dataset's campaign (load_published's data), read on a desktop
(1280x900) and a phone (390x844): the LogicNLG table with its title and marked columns,
across the page in a box of its own, the
RotoWire line and box scores with player names that stay in view while the figures scroll
sideways, the WebNLG triples; nothing cut off. With SCREENSHOTS=1 the pages are written to
docs/screenshots/<dataset>-hit[-phone].png. Skipped without ../shared."""

import os
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Campaign
from annotation.published import load_dataset
from nlgdata.published import Dataset, read_logicnlg, read_rotowire, read_webnlg2020
from ranking.automatic_metrics.models import MetricRun
from ranking.automatic_metrics.service import execute_metric_run
from tests.browser.test_hit_page import VIEWPORTS, assert_fits, expect, open_hit
from tests.browser.test_results_page import PAGE_WIDTH
from tests.browser.test_screenshots import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def one_item(dataset: Dataset, external_id: str) -> Campaign:
    """The dataset's campaign with one of its items (and the outputs for it), open."""
    dataset.items = [item for item in dataset.items if item.external_id == external_id]
    for system in dataset.systems:
        system.outputs = {external_id: system.outputs[external_id]}
    campaign = load_dataset(dataset).campaign
    Campaign.objects.filter(pk=campaign.pk).update(
        status=Campaign.Status.OPEN, min_seconds_per_hit=0, attention_check_every=0
    )
    # Straight to the HIT these tests read: the comprehension check (on by default) has
    # tests of its own.
    campaign.criteria.update(comprehension_check=False)
    return campaign


def shoot(page, name: str, size: str) -> None:
    if os.environ.get("SCREENSHOTS"):
        OUT.mkdir(parents=True, exist_ok=True)
        page.evaluate("document.activeElement.blur(); window.scrollTo(0, 0)")
        suffix = "-phone" if size == "phone" else ""
        page.screenshot(path=OUT / f"{name}-hit{suffix}.png", full_page=True)


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
def test_logicnlg_hit_shows_the_titled_table_with_its_linked_columns(
    live_server, browser, logicnlg_data, size
):
    # A 30-row, 9-column table (the test set has up to 47 rows), linked to two columns.
    campaign = one_item(read_logicnlg(logicnlg_data), "1-254234-1.html.csv:0")
    page = open_hit(browser, live_server, campaign, "quality", VIEWPORTS[size])
    card = page.locator(".input-card .input-table")
    expect(card.locator("caption")).to_have_text("provinces of china")
    assert card.locator("tbody tr").count() == 30
    # LogicNLG links a statement to columns: their headings are marked, not their 60 cells.
    expect(card.locator("th.marked")).to_have_text(
        ["province (marked column)", "density square (marked column)"]
    )
    assert card.locator("td.marked").count() == 0
    assert card.locator("td.in-marked").count() == 2 * 30
    expect(card.locator(".table-marks")).to_contain_text("The columns marked in yellow")
    expect(page.locator("fieldset.output")).to_have_count(3)
    shoot(page, "logicnlg", size)
    # Across the page, not squeezed beside the sentences; the table scrolls in its own box.
    grid = page.locator(".hit-grid")
    assert "wide-input" in (grid.get_attribute("class") or "")
    region, table = card.locator(".scroll"), card.locator("table")
    box = region.bounding_box()
    assert box["width"] >= (1000 if size == "desktop" else 330)  # was 432 px at 1280
    assert box["height"] < VIEWPORTS[size]["height"] * 0.45
    assert table.bounding_box()["height"] > box["height"]  # 30 rows: it scrolls down
    heading = card.locator("thead th").first
    region.evaluate("el => { el.scrollTop = el.scrollHeight; el.scrollLeft = el.scrollWidth; }")
    assert abs(heading.bounding_box()["y"] - box["y"]) < 2  # the headings stay in view
    assert heading.bounding_box()["x"] >= box["x"] - 1  # and so does the first column
    assert_fits(page)
    page.close()


STICKY = "el => getComputedStyle(el).position"


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
def test_rotowire_hit_shows_line_and_box_scores_with_names_in_view(
    live_server, browser, rotowire_data, size
):
    campaign = one_item(read_rotowire(rotowire_data), "02_03_17 Lakers at Celtics")
    page = open_hit(browser, live_server, campaign, "quality", VIEWPORTS[size])
    card = page.locator(".input-card .input-boxscore")
    line = card.locator("table").first
    expect(line.locator("tbody th")).to_have_text(["Los Angeles Lakers", "Boston Celtics"])
    assert card.locator("table").count() == 3
    assert card.locator("tbody th[scope=row]").count() == 2 + 26
    name = card.locator("table").nth(1).locator("tbody th").first
    assert name.evaluate(STICKY) == "sticky"
    assert_fits(page)
    shoot(page, "rotowire", size)
    # Scrolled sideways to its last column, a box score still shows the player's name.
    region = card.locator(".scroll").nth(1)
    region.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    assert name.bounding_box()["x"] >= region.bounding_box()["x"] - 1
    page.close()


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
def test_webnlg_hit_shows_seven_triples(live_server, browser, webnlg_data, size):
    dataset = read_webnlg2020(webnlg_data)
    seven = next(item for item in dataset.items if len(item.data["triples"]) == 7)
    campaign = one_item(dataset, seven.external_id)
    page = open_hit(browser, live_server, campaign, "quality", VIEWPORTS[size])
    expect(page.locator(".input-card .triples li")).to_have_count(7)
    expect(page.locator("fieldset.output")).to_have_count(5)
    assert_fits(page)
    shoot(page, "webnlg2020", size)
    page.close()


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
def test_logicnlg_results_show_its_bleu_before_any_ranking(
    live_server, browser, logicnlg_data, size, monkeypatch, tmp_path
):
    """LogicNLG's campaign, loaded and scored, not yet judged: the results page shows its
    BLEU-1/2/3 beside the word-overlap metrics, each table ordered by its own metric, and
    says what comes once the criterion is ranked; nothing widens the page."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no Java: its metrics are reported missing
    campaign = one_item(read_logicnlg(logicnlg_data), "1-254234-1.html.csv:0")
    execute_metric_run(MetricRun.objects.create(campaign=campaign))
    page = log_in(browser, live_server, VIEWPORTS[size])
    page.goto(live_server.url + reverse("ranking:results", args=[campaign.slug, "quality"]))
    section = page.locator("#metrics")
    expect(section.locator("#metrics-unranked")).to_contain_text("No ranking of quality yet")
    bleu = section.locator("h3", has_text="BLEU-1/2/3 of statements about tables (LogicNLG)")
    expect(bleu).to_be_visible()
    table = section.locator("table", has=page.locator("th", has_text="BLEU-3 (LogicNLG)"))
    expect(table.locator("tbody tr")).to_have_count(3)
    expect(table.locator("thead th")).to_have_text(
        ["System", "BLEU-1 (LogicNLG)", "BLEU-2 (LogicNLG)", "BLEU-3 (LogicNLG)"]
    )
    scroll_width, client_width = page.evaluate(PAGE_WIDTH)
    assert scroll_width <= client_width
    if os.environ.get("SCREENSHOTS"):
        section.scroll_into_view_if_needed()
        suffix = "-phone" if size == "phone" else ""
        section.screenshot(path=OUT / f"logicnlg-metrics{suffix}.png")
    page.close()
