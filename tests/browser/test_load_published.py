"""An organiser loads WebNLG+ 2020 from the admin: the campaign list's "Load a published
dataset", the form with a .zip of the dataset's folder, the job's page while it waits for a
worker, and (the worker's function run here) the page once loaded, which it reloads itself
into. Both pages fit a 390x844 phone. With SCREENSHOTS=1 it writes
docs/screenshots/load-published-{form,done}[-phone].png."""

import os
import zipfile

import pytest
from django.urls import reverse

from annotation.models import Campaign, PublishedLoad
from annotation.published_uploads import execute_published_load
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_results_page import PAGE_WIDTH
from tests.browser.test_screenshots import OUT, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect


def zipped_folder(folder, archive):
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out.write(path, f"{folder.name}/{path.relative_to(folder)}")
    return archive


def fits_and_shoot(page, name: str) -> None:
    """Nothing pushes the page sideways on a phone; both sizes shot with SCREENSHOTS=1."""
    for suffix, size in {"-phone": PHONE, "": DESKTOP}.items():
        page.set_viewport_size(size)
        scroll_width, client_width = page.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (name, suffix, scroll_width, client_width)
        if os.environ.get("SCREENSHOTS"):
            OUT.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=OUT / f"load-published-{name}{suffix}.png", full_page=True)


def test_organiser_loads_webnlg_from_an_archive(
    live_server, browser, webnlg_data, tmp_path, settings
):
    settings.UPLOAD_DIR = tmp_path / "uploads"
    archive = zipped_folder(webnlg_data, tmp_path / "webnlg2020.zip")
    page = log_in(browser, live_server, DESKTOP)
    page.goto(live_server.url + reverse("admin:annotation_campaign_changelist"))
    page.get_by_role("link", name="Load a published dataset").click()
    page.get_by_label("Dataset:").select_option("webnlg2020")
    page.get_by_label("Campaign:").fill("webnlg-human-eval")
    page.get_by_label("Archive:").set_input_files(archive)
    fits_and_shoot(page, "form")
    page.get_by_role("button", name="Load").click()
    expect(page.locator("#load-state")).to_contain_text("Waiting for a worker")

    job = PublishedLoad.objects.get()
    assert execute_published_load(job)
    expect(page.locator("#load-state")).to_contain_text("Loaded.", timeout=20_000)
    expect(page.locator("#load-state")).to_contain_text("loaded 178 items")
    fits_and_shoot(page, "done")
    page.get_by_role("link", name="The campaign").click()
    expect(page.locator("#id_slug")).to_have_value("webnlg-human-eval")
    campaign = Campaign.objects.get(slug="webnlg-human-eval")
    assert (campaign.items.count(), campaign.systems.count()) == (178, 16)
    page.close()
