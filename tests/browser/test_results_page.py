"""The results page on a phone (390x844): under every protocol, the ranking table and the
charts stay within the page; a wide table scrolls sideways on its own instead of widening the
whole page."""

import pytest
from django.urls import reverse

from judges.models import Judge, JudgeScore
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
    criterion = campaign.criteria.get(name="quality")
    judge = Judge.objects.create(criterion=criterion, name="oracle", kind="metric", fused=True)
    for n, item in enumerate(items):
        outputs = list(item.outputs.order_by("system__name"))
        make_judged_hit(outputs, [300, 200 + n, 100, 50 + 10 * n])
        for output, score in zip(outputs, [90, 70, 40, 20 + n], strict=True):
            JudgeScore.objects.create(judge=judge, output=output, score=score)
    for protocol in PROTOCOLS:
        run = RankingRun.objects.create(
            campaign=campaign,
            criterion=criterion,
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
