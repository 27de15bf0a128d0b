"""An organiser's whole journey, in the browser only, with a real Celery worker (and its
beat) doing the background work: a campaign made in the admin, the E2E items and three
systems' outputs uploaded (the outputs in one form; the E2E folder's first 40 MRs, as
published, tests/e2e_subset.py), the campaign opened and its Prolific
study URL read, a pilot by one Prolific worker, the ranking the worker's sweep computes,
the judgments exported, the automatic metrics computed with their progress shown, and the
datasheet and the bundle downloaded. The database is checked after each step.

With SCREENSHOTS=1 it writes docs/screenshots/organiser-journey-*.png at 1280x900: campaign-added,
upload-done, campaign-open, pilot-done, results, export, metrics-queued, metrics-running (where
the worker was slow enough to be seen at it), metrics-done, datasheet, bundle; and the upload's
result and the results page at 390x844 too (upload-done-phone, results-phone). It takes about
40 s, most of it the worker's METEOR start (METEOR, ROUGE-L and CIDEr need Java; without it
they are reported missing).
"""

import csv
import io
import os
import re
import time
import zipfile
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.models import Annotator, Assignment, Campaign, Item, Judgment, Output, UploadJob
from ranking.automatic_metrics.models import MetricRun
from ranking.models import RankingRun
from ranking.protocols import DEFAULT
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.test_screenshots import log_in
from tests.browser.test_worker_journey import expect_one_way_out, new_worker, take_check
from tests.conftest import wait_until
from tests.e2e_subset import e2e_subset

# Slow: about 40 s, a Celery worker, two browsers and METEOR's start in Java.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.celery,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

expect = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed"
).expect

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
SYSTEMS = ["slug", "tgen", "tuda"]  # three systems keep the metrics quick
# The first 40 MRs of the E2E test set, in the published files' own layout: the whole set's
# 630 made the metrics a minute of this test, and sizes have tests of their own.
E2E_ITEMS = 40
PILOT_HITS = 2
# The background work (an upload, a ranking, the metrics) is seconds with the worker's fast
# settings (tests/conftest.py); these bound the waits, they are not what it takes.
UPLOAD_WAIT_MS = 120_000
RANKING_WAIT_S = 90
METRICS_WAIT_MS = 240_000


def shoot(page, name: str, phone: bool = False, part: str = "", whole: bool = True) -> None:
    """The page at 1280x900 (and 390x844 where asked), with SCREENSHOTS=1 only: the element
    `part` where given, else the whole page, or what the window shows (whole=False)."""
    if not os.environ.get("SCREENSHOTS"):
        return
    SHOTS.mkdir(parents=True, exist_ok=True)
    sizes = {"": DESKTOP, "-phone": PHONE} if phone else {"": DESKTOP}
    for suffix, size in sizes.items():
        page.set_viewport_size(size)
        page.evaluate("window.scrollTo(0, 0)")
        path = SHOTS / f"organiser-journey-{name}{suffix}.png"
        if part:
            page.locator(part).screenshot(path=path)
        else:
            page.screenshot(path=path, full_page=whole)
    page.set_viewport_size(DESKTOP)


def campaign_link(page, live_server, name: str) -> None:
    """Follow one of the campaign's links in the admin's campaign list."""
    page.goto(live_server.url + reverse("admin:annotation_campaign_changelist"))
    page.locator("#result_list").get_by_role("link", name=name, exact=True).click()


def create_campaign(page, live_server) -> Campaign:
    page.goto(live_server.url + reverse("admin:annotation_campaign_add"))
    page.get_by_label("Name:").press_sequentially("E2E pilot")
    expect(page.get_by_label("Slug:")).to_have_value("e2e-pilot")  # made from the name
    page.get_by_label("Outputs per hit:").fill("3")
    page.get_by_label("Standard utterance:").fill("The Vaults is a pub by the riverside.")
    page.get_by_label("Standard input:").fill("name[The Vaults], eatType[pub], area[riverside]")
    page.get_by_label("Max hits per annotator:").fill(str(PILOT_HITS))
    # The pilot's worker is a script: no minimum time per HIT, no attention checks (both
    # have tests of their own); the comprehension check stays on, as it comes.
    page.get_by_label("Min seconds per hit:").fill("0")
    page.get_by_label("One HIT in this many carries an attention check:").fill("0")
    page.get_by_role("button", name="Add another Criterion").click()
    page.locator("input[name='criteria-0-name']").fill("quality")
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".messagelist .success")).to_contain_text("was added successfully")
    shoot(page, "campaign-added")
    campaign = Campaign.objects.get(slug="e2e-pilot")
    assert campaign.status == Campaign.Status.DRAFT
    criterion = campaign.criteria.get()
    assert (criterion.name, criterion.is_open, criterion.comprehension_check) == (
        "quality",
        True,
        True,
    )
    return campaign


def upload(page, live_server, kind: str, files: list[Path]):
    """Upload through the admin's "Upload data" and wait on the job's page (it reloads itself)
    until the worker has imported the files."""
    campaign_link(page, live_server, "Upload data")
    page.get_by_label("Kind:").select_option(kind)
    page.get_by_label("Files:").set_input_files(files)
    page.get_by_role("button", name="Upload and import").click()
    expect(page.locator("#upload-state")).to_contain_text("Imported.", timeout=UPLOAD_WAIT_MS)


def open_campaign(page, live_server, campaign: Campaign) -> str:
    """Open the campaign to annotators; the study URL to paste into Prolific."""
    page.goto(live_server.url + reverse("admin:annotation_campaign_change", args=[campaign.pk]))
    page.get_by_label("Status:").select_option("open")
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".messagelist .success")).to_contain_text("was changed successfully")
    entry = page.locator(".field-entry_links code").first.inner_text()
    shoot(page, "campaign-open", whole=False)  # the study URL is near the top
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.OPEN
    return entry


def pilot(browser, entry: str, campaign: Campaign) -> None:
    """One Prolific worker through the study URL: the check, the HITs, the way out."""
    page = new_worker(browser)
    # The module's Celery worker ranks while the pilot clicks, on a CI machine's two cores
    # shared with the other test processes: a click's page took over 10 s there.
    page.set_default_timeout(30_000)
    filled = {"PROLIFIC_PID": "pilot-1", "STUDY_ID": "study-1", "SESSION_ID": "session-1"}
    url = entry
    for name, value in filled.items():
        url = url.replace(f"{{{{%{name}%}}}}", value)
    page.goto(url)
    page.get_by_role("button", name="Start").click()
    take_check(page, "quality", careful=True)
    for number in range(1, PILOT_HITS + 1):
        expect(page.locator(".hit-head .progress")).to_contain_text(f"page {number} of")
        for n, sentence in enumerate(page.locator("fieldset.output").all()):
            sentence.get_by_label("Score").fill(str(90 - 20 * n))
            sentence.get_by_label("reflects the input perfectly").check()
        page.get_by_role("button", name="Submit and continue").click()
    expect_one_way_out(page, campaign.completion_code)
    shoot(page, "pilot-done")
    page.close()


def wait_for_ranking(page, live_server, campaign: Campaign) -> None:
    """The results page, reloaded until the worker's sweep has ranked the pilot."""
    campaign_link(page, live_server, "Results")
    deadline = time.monotonic() + RANKING_WAIT_S
    while not page.locator("table.ranking tbody tr").count():
        assert time.monotonic() < deadline, "no ranking of the pilot on the results page"
        page.wait_for_timeout(1000)
        page.reload()
    assert campaign.criteria.get().name in page.url


def download(page, click) -> bytes:
    with page.expect_download() as info:
        click()
    return Path(info.value.path()).read_bytes()


def csv_rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))


def test_organiser_runs_a_campaign_from_the_browser_only(
    celery_worker_process, live_server, browser, e2e_data, tmp_path
):
    started = time.monotonic()
    e2e_folder = e2e_subset(e2e_data, tmp_path / "e2e", mrs=E2E_ITEMS)
    page = log_in(browser, live_server, DESKTOP)
    page.set_default_timeout(30_000)  # as the pilot's page (pilot, below)

    # 1. The campaign, made in the admin.
    campaign = create_campaign(page, live_server)

    # 2. The E2E items, then three systems' outputs in one form.
    upload(page, live_server, "items", [e2e_folder / "testset_w_refs.csv"])
    assert Item.objects.filter(campaign=campaign).count() == E2E_ITEMS
    outputs = [e2e_folder / "outputs" / f"{name}.tsv" for name in SYSTEMS]
    upload(page, live_server, "outputs", outputs)
    expect(page.locator("#upload-state")).to_contain_text("tgen.tsv")
    shoot(page, "upload-done", phone=True)
    per_system = {
        name: Output.objects.filter(system__campaign=campaign, system__name=name).count()
        for name in SYSTEMS
    }
    assert per_system == dict.fromkeys(SYSTEMS, E2E_ITEMS)
    assert list(UploadJob.objects.values_list("status", flat=True)) == ["done", "done"]

    # 3. Opened; the study URL is on the host the organiser reached the admin at.
    entry = open_campaign(page, live_server, campaign)
    assert entry.startswith(f"{live_server.url}/annotate/e2e-pilot/quality/?PROLIFIC_PID="), entry

    # 4. A pilot: one Prolific worker, in a browser of their own.
    pilot(browser, entry, campaign)
    worker = Annotator.objects.get(campaign=campaign, external_id="pilot-1")
    hits = Assignment.objects.filter(annotator=worker, status="submitted")
    assert hits.count() == PILOT_HITS and not hits.exclude(flag="").exists()
    assert Judgment.objects.filter(assignment__annotator=worker).count() == PILOT_HITS * 3

    # 5. The ranking of the pilot, computed by the worker's sweep, and its CSV.
    wait_for_ranking(page, live_server, campaign)
    # The sweep may have ranked the first HIT alone before the second came: the run of both.
    # The page opens on the calibrated verdict; its CSV is the one the link gives.
    runs = RankingRun.objects.filter(campaign=campaign, protocol=DEFAULT, status="done")
    run = wait_until(lambda: runs.filter(hits=PILOT_HITS).first(), RANKING_WAIT_S)
    assert run.criterion.name == "quality" and run.results.count() == len(SYSTEMS)
    page.reload()
    shoot(page, "results", phone=True)
    ranking = csv_rows(download(page, page.get_by_role("link", name="Download CSV").click))
    assert ranking[0][:3] == ["cluster", "system", "strength"], ranking[0]
    assert sorted(row[1] for row in ranking[1:]) == SYSTEMS

    # 6. The judgments, exported.
    campaign_link(page, live_server, "Export judgments")
    page.get_by_label("Format:").select_option("csv")
    shoot(page, "export")
    judgments = csv_rows(download(page, page.get_by_role("button", name="Download").click))
    assert "score" in judgments[0] and "system" in judgments[0], judgments[0]
    assert len(judgments) == 1 + PILOT_HITS * 3

    # 7. The automatic metrics: queued, their progress, then the scores.
    campaign_link(page, live_server, "Results")
    page.get_by_role("button", name="Compute automatic metrics").click()
    progress = page.locator("#metrics-progress")
    expect(progress).to_contain_text(re.compile(r"Metric run #\d+ is (queued|running)"))
    shoot(page, "metrics-queued", part="#metrics")
    # The page reloads itself (every 3 s) while the run is pending: the systems scored so far
    # show while the worker scores them (tens of seconds each), unless it was quicker.
    done = page.get_by_role("link", name="Download metrics CSV")
    expect(progress.filter(has_text="systems scored").or_(done)).to_be_visible(
        timeout=METRICS_WAIT_MS
    )
    if progress.is_visible():
        expect(progress).to_contain_text(re.compile(rf"[0-2] of {len(SYSTEMS)} systems scored"))
        shoot(page, "metrics-running", part="#metrics")
    expect(done).to_be_visible(timeout=METRICS_WAIT_MS)
    shoot(page, "metrics-done", part="#metrics")
    metrics = MetricRun.objects.get(campaign=campaign)
    assert metrics.status == MetricRun.Status.DONE, metrics.error
    assert metrics.systems == len(SYSTEMS) and metrics.outputs == len(SYSTEMS) * E2E_ITEMS

    # 8. The datasheet and the bundle.
    campaign_link(page, live_server, "Datasheet")
    sheet = download(page, page.get_by_role("button", name="Download").click).decode()
    assert "E2E pilot" in sheet
    shoot(page, "datasheet")
    campaign_link(page, live_server, "Bundle")
    shoot(page, "bundle")
    bundle = download(page, page.get_by_role("button", name="Download the bundle").click)
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        names = archive.namelist()
    assert any("datasheet" in name for name in names), names
    print(f"organiser journey: {time.monotonic() - started:.0f} s")
