"""The HIT page as a worker reads it, on a desktop (1280x900) and on a phone (390x844): the
input being judged comes first and cannot be taken for the standard's, and nothing is cut
off or pushes the page sideways, on a real E2E item and on long inputs of every kind."""

import pytest

from annotation.models import Campaign
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.demo import e2e_campaign
from tests.factories import make_campaign, make_item, make_output, make_system

pytestmark = pytest.mark.browser

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect

VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}

# What sticks out of its box, page-wide: every element whose content is wider than itself,
# but for the tables' own sideways-scrolling regions (.scroll), which are meant to.
OVERFLOW = """() => {
  const bad = [];
  for (const el of document.querySelectorAll("main *")) {
    if (el.closest(".scroll")) continue;
    const display = getComputedStyle(el).display;
    if (display === "inline" || display === "contents") continue;
    if (el.scrollWidth > el.clientWidth + 1) {
      bad.push(`${el.tagName}.${el.className}#${el.id}: ${el.scrollWidth} > ${el.clientWidth}`);
    }
  }
  const page = document.scrollingElement;
  return {page: [page.scrollWidth, page.clientWidth], bad: bad};
}"""

# True when the element's middle is the element itself: nothing sticky covers it.
ON_TOP = """el => {
  const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  return hit === el || el.contains(hit);
}"""


def open_hit(browser, live_server, campaign: Campaign, criterion: str, viewport: dict):
    page = browser.new_page(viewport=viewport)
    page.set_default_timeout(10_000)
    query = f"PROLIFIC_PID=reader-{viewport['width']}"
    page.goto(f"{live_server.url}/annotate/{campaign.slug}/{criterion}/?{query}")
    page.get_by_role("button", name="Start").click()
    expect(page.locator("#hit-form")).to_be_visible()
    return page


def assert_fits(page) -> None:
    """No sideways scrolling, nothing cut off, and every score box and the submit button can
    be scrolled to, whole and uncovered."""
    found = page.evaluate(OVERFLOW)
    width, visible = found["page"]
    assert width <= visible, f"the page scrolls sideways: {width} > {visible}\n" + "\n".join(
        found["bad"]
    )
    assert not found["bad"], "cut off or sticking out:\n" + "\n".join(found["bad"])
    boxes = page.locator("fieldset.output .score-row input").all()
    assert boxes
    size = page.viewport_size
    for target in [*boxes, page.locator("#submit-hit")]:
        target.evaluate("el => el.scrollIntoView({block: 'center'})")
        box = target.bounding_box()
        assert 0 <= box["x"] and box["x"] + box["width"] <= size["width"], f"{target}: {box}"
        assert 0 <= box["y"] and box["y"] + box["height"] <= size["height"], f"{target}: {box}"
        assert target.evaluate(ON_TOP), f"{target} is covered"


def top(page, selector: str) -> float:
    return page.locator(selector).first.bounding_box()["y"]


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
def test_quality_page_shows_the_items_input_first_and_fits(live_server, browser, e2e_data, size):
    campaign = e2e_campaign(e2e_data)
    item = campaign.items.get()
    page = open_hit(browser, live_server, campaign, "quality", VIEWPORTS[size])
    card = page.locator(".input-card")
    expect(card.get_by_role("heading")).to_have_text("The input these sentences describe")
    for _, value in item.input_data["attributes"]:
        expect(card).to_contain_text(value)
    # Read first: above the standard and the sentences on a phone, and at the top of the
    # left column on a desktop (where the sentences sit beside it).
    assert top(page, ".input-card") < top(page, ".standard-card")
    if size == "phone":
        assert top(page, ".standard-card") < top(page, "fieldset.output")
    # The standard's own input is folded away, and says whose it is.
    standard = page.locator(".standard-card details")
    expect(standard.locator("summary")).to_contain_text("standard's own input")
    expect(standard).not_to_have_attribute("open", "")
    standard_name = campaign.standard_input["attributes"][0][1]
    expect(standard.get_by_text(standard_name, exact=True)).to_be_hidden()
    assert_fits(page)
    standard.locator("summary").click()
    expect(standard.get_by_text(standard_name, exact=True)).to_be_visible()
    assert_fits(page)
    page.close()


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
def test_naturalness_page_shows_no_input_and_fits(live_server, browser, e2e_data, size):
    campaign = e2e_campaign(e2e_data)
    page = open_hit(browser, live_server, campaign, "naturalness", VIEWPORTS[size])
    expect(page.locator(".input-card")).to_have_count(0)
    expect(page.locator(".standard-card details")).to_have_count(0)
    expect(page.locator(".standard-card")).to_contain_text(campaign.standard_text)
    assert_fits(page)
    page.close()


LONG_WORD = "Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch"
LONG_SENTENCE = (
    f"The restaurant near {LONG_WORD} serves food that is, by every account we could find, "
    "among the best in the region, with a view of the river, friendly staff, prices in the "
    "middle range and a customer rating of five out of five. " * 3
)
STATS = "MIN PTS REB AST STL BLK TO PF FGM FGA FG_PCT FG3M FG3A FG3_PCT FTM FTA FT_PCT".split()
LONG_INPUTS = {
    "mr": {"attributes": [[f"attribute{n}", f"{LONG_WORD} value {n}"] for n in range(8)]},
    "table": {
        "title": f"Results of the {LONG_WORD} championship",
        "header": [f"Column {n} of the table" for n in range(9)],
        "rows": [[f"{LONG_WORD} {r}-{c}" for c in range(9)] for r in range(12)],
        "highlighted": [[1, 1], [3, 4]],
    },
    "boxscore": {
        "home": {"city": "Boston", "name": "Celtics", "PTS": 105, "WINS": 30, "LOSSES": 12},
        "visitor": {"city": "Miami", "name": "Heat", "PTS": 98, "WINS": 28, "LOSSES": 14},
        "players": [
            {"name": f"Player {n} {LONG_WORD}", "team": ("home", "visitor")[n % 2]}
            | {stat: n * 3 + s for s, stat in enumerate(STATS)}
            for n in range(26)
        ],
    },
    "triples": {
        "triples": [
            [f"{LONG_WORD}_{n}", "isPartOfTheCountyOfTheUnitedKingdom", f"Anglesey_{LONG_WORD}"]
            for n in range(10)
        ]
    },
    "document": {
        "title": f"The village of {LONG_WORD}",
        "text": "\n\n".join([LONG_SENTENCE] * 12),
        "question": f"country of {LONG_WORD}",
    },
}


def long_campaign(kind: str) -> Campaign:
    campaign = make_campaign(
        slug=f"long-{kind}",
        outputs_per_hit=5,
        min_seconds_per_hit=0,
        standard_text=LONG_SENTENCE,
        standard_input_kind=kind,
        standard_input=LONG_INPUTS[kind],
    )
    item = make_item(campaign, input_kind=kind, input_data=LONG_INPUTS[kind])
    for n in range(5):
        make_output(item, make_system(campaign), text=f"{n}: {LONG_SENTENCE}{LONG_WORD * n}")
    return campaign


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
@pytest.mark.parametrize("kind", sorted(LONG_INPUTS))
def test_quality_page_with_long_input_and_sentences_fits(live_server, browser, kind, size):
    campaign = long_campaign(kind)
    page = open_hit(browser, live_server, campaign, "quality", VIEWPORTS[size])
    expect(page.locator(f".input-card .input-{kind}")).to_be_visible()
    assert_fits(page)
    page.locator(".standard-card details summary").click()
    assert_fits(page)
    page.close()
