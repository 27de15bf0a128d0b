"""The browser tests' pages and live server; the browser itself is tests/chromium.py's,
one Chromium per test process."""

import pytest
from django.test import override_settings
from pytest_django.live_server_helper import LiveServer

from tests.chromium import launch

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def browser_with_page_cache(playwright_driver):
    """Chromium as people run it, whose Back button shows the page as it was left (the
    back/forward cache: form values, script state); Playwright turns that cache off."""
    chromium = launch(playwright_driver, ignore_default_args=["--disable-back-forward-cache"])
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def live_server():
    """pytest-django's live server, as a plain-HTTP trial on loopback runs it
    (SECURE_HTTPS=false): it builds its middleware once, when it starts, so the settings
    must be in place before; module scope keeps them away from the rest of the suite."""
    plain_http = override_settings(
        SECURE_SSL_REDIRECT=False, SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False
    )
    with plain_http:
        server = LiveServer("localhost")
        yield server
        server.stop()
