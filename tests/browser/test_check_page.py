"""The comprehension check on a phone (390x844): its score boxes are the HIT page's, large
enough to tap and read, not the browser's small default ones."""

import pytest

from tests.browser.conftest import PHONE
from tests.browser.demo import demo_campaign

pytestmark = pytest.mark.browser

BOX_WIDTH = "el => [el.getBoundingClientRect().width, getComputedStyle(el).fontSize]"


def test_check_page_score_boxes_are_the_hit_pages(live_server, browser):
    campaign = demo_campaign()
    campaign.criteria.update(comprehension_check=True)
    page = browser.new_page(viewport=PHONE)
    page.goto(f"{live_server.url}/annotate/{campaign.slug}/quality/?PROLIFIC_PID=checker")
    page.get_by_role("button", name="Start").click()
    page.wait_for_url("**/check/")
    boxes = page.locator("#check-form .score-row input")
    assert boxes.count() == 2
    for n in range(2):
        width, font_size = boxes.nth(n).evaluate(BOX_WIDTH)
        assert width >= 136 and font_size == "18.4px", (width, font_size)  # 8.5rem, 1.15rem
    page.close()
