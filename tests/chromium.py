"""One headless Chromium per test process, through Playwright's sync API, on Debian's
`chromium` package; registered for the whole suite in tests/conftest.py, for the browser
tests (tests/browser/) and the production site's admin check (tests/production/).

Playwright's own browser downloads do not work everywhere this suite runs, so the browser
is the system one (CHROMIUM_PATH, default /usr/bin/chromium). Tests skip, saying why, where
the playwright package or the browser is missing. A process can hold only one Playwright
driver: a second `sync_playwright()` in it fails ("using Playwright Sync API inside the
asyncio loop"), so every test that needs a browser takes it from here.
"""

import os
import shutil
from pathlib import Path

import pytest
from django.db import connections

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def playwright_driver(django_db_setup):
    """Playwright's driver, once for a test process: with a driver and a browser for each
    test file, the browser tests took 85.7 CPU-seconds, against 68.6 (two xdist workers on
    PostgreSQL; docs/testing.md). After the test database is set up, and stopped before it
    is dropped."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the playwright package is not installed"
    )
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH")
    # Playwright's sync API leaves its event loop set as running in this thread, for the rest
    # of the process: Django would refuse the ORM calls of every later test, browser or not,
    # though they are all plain synchronous ones.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_api.sync_playwright() as playwright:
            yield playwright
            # The tests' connections, opened while Playwright's loop ran, belong to its
            # context: closed in it, or PostgreSQL refuses to drop the test database.
            connections.close_all()
        connections.close_all()


def launch(playwright, **options):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, **options)


@pytest.fixture(scope="session")
def session_chromium(playwright_driver):
    """One Chromium for the test process's browser tests (the `browser` fixture leaves it
    with nothing open after each)."""
    chromium = launch(playwright_driver)
    yield chromium
    chromium.close()


@pytest.fixture
def browser(session_chromium):
    """The process's Chromium; whatever the test opened in it (contexts, with their cookies,
    storage and pages) is closed after it, so the next test starts from a browser with
    nothing open, as from a fresh launch."""
    yield session_chromium
    for context in session_chromium.contexts:
        context.close()
