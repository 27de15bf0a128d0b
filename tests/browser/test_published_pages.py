"""A HIT of each published dataset's campaign (load_published's data), read on a desktop
(1280x900) and a phone (390x844): the LogicNLG table with its title and marked columns, the
RotoWire line and box scores with player names that stay in view while the figures scroll
sideways, the WebNLG triples; nothing cut off. With SCREENSHOTS=1 the pages are written to
docs/screenshots/<dataset>-hit[-phone].png. Skipped without ../shared."""

import os
from pathlib import Path

import pytest

from annotation.models import Campaign
from annotation.published import load_dataset
from nlgdata.published import Dataset, read_logicnlg, read_rotowire, read_webnlg2020
from tests.browser.test_hit_page import VIEWPORTS, assert_fits, expect, open_hit

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
    assert card.locator("td.marked").count() == 2 * 30
    expect(page.locator("fieldset.output")).to_have_count(3)
    assert_fits(page)
    shoot(page, "logicnlg", size)
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
