"""The organiser's admin pages in a 1280x900 window and on a 390x844 phone: nothing pushes
them sideways."""

import pytest
from django.urls import reverse

from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_results_page import PAGE_WIDTH
from tests.browser.test_screenshots import log_in
from tests.factories import make_campaign

pytestmark = pytest.mark.browser


def test_campaign_list_fits_a_desktop_window(live_server, browser):
    make_campaign(name="E2E quality study")
    page = log_in(browser, live_server, DESKTOP)
    page.goto(live_server.url + reverse("admin:annotation_campaign_changelist"))
    assert page.locator("select[name=action]").is_visible()
    scroll_width, client_width = page.evaluate(PAGE_WIDTH)
    assert scroll_width <= client_width, (scroll_width, client_width)
    page.close()


def test_campaign_forms_fit_a_phone(live_server, browser):
    campaign = make_campaign(name="E2E quality study")
    page = log_in(browser, live_server, PHONE)
    for name in ("upload", "export", "invite"):
        page.goto(
            live_server.url + reverse(f"admin:annotation_campaign_{name}", args=[campaign.pk])
        )
        assert page.locator("table.form-table").is_visible(), name
        scroll_width, client_width = page.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (name, scroll_width, client_width)
    page.close()
