"""The results page on a phone (390x844): under every protocol, the ranking table and the
charts stay within the page; a wide table scrolls sideways on its own instead of widening the
whole page."""

import pytest
from django.urls import reverse

from ranking.models import RankingRun
from ranking.protocols import PROTOCOLS
from ranking.service import execute_run
from tests.browser.conftest import PHONE
from tests.browser.test_screenshots import log_in
from tests.factories import make_judged_hit, make_system_set

pytestmark = pytest.mark.browser

PAGE_WIDTH = "() => [document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"


def test_results_page_fits_a_phone_under_every_protocol(live_server, browser):
    campaign, systems, items = make_system_set(systems=4, items=6)
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [300, 200, 100, 50])
    for protocol in PROTOCOLS:
        run = RankingRun.objects.create(
            campaign=campaign,
            criterion=campaign.criteria.get(name="quality"),
            repetitions=20,
            seed=1,
            protocol=protocol,
        )
        execute_run(run)
    page = log_in(browser, live_server, PHONE)
    url = live_server.url + reverse("ranking:results", args=[campaign.slug, "quality"])
    for protocol in PROTOCOLS:
        page.goto(f"{url}?protocol={protocol}")
        assert page.locator("table.ranking tbody tr").first.is_visible(), protocol
        scroll_width, client_width = page.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (protocol, scroll_width, client_width)
    page.close()
