"""Screenshots of the organiser's pages (opt-in, as tests/browser/test_screenshots.py:
SCREENSHOTS=1 pytest -m browser), at 1280x900 and 390x844:

- docs/screenshots/monitor-imported[-phone].png: the live monitor part way through, with imported
  ratings' HITs counted apart and the annotators who typed scores off the scale;
- docs/screenshots/metrics-progress[-phone].png: a metric run part way through, on the
  results page;
- docs/screenshots/bundle[-phone].png: the admin's bundle page;
- docs/screenshots/upload-{form,running,done,failed}[-phone].png: the admin's upload form
  and an upload's page while a worker imports it, after the 21 E2E output files went in
  at once, and after a file with an error.
"""

import os
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from annotation.models import Annotator, Assignment, UploadJob
from annotation.uploads import PROGRESS, ProgressFile, execute_upload, job_folder, queue_upload
from ranking.automatic_metrics.models import MetricRun
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.browser.conftest import DESKTOP, PHONE
from tests.browser.demo import demo_campaign
from tests.browser.test_screenshots import OUT, log_in
from tests.factories import (
    make_annotator,
    make_assignment,
    make_campaign,
    make_hit,
    make_judged_hit,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.environ.get("SCREENSHOTS"), reason="set SCREENSHOTS=1 to write them"),
]
VIEWPORTS = {"": DESKTOP, "-phone": PHONE}


def judged(outputs, end, seconds: float, annotator=None, flag: str = "") -> None:
    assignment = make_judged_hit(outputs, [100, 80, 60, 40, 20][: len(outputs)], annotator)
    Assignment.objects.filter(pk=assignment.pk).update(
        started_at=end - timedelta(seconds=seconds), submitted_at=end, flag=flag
    )


def shoot(page, live_server, url: str, name: str, selector: str, part: str = "") -> None:
    """Both viewports; of the element `part` only, where given, else the whole page."""
    OUT.mkdir(parents=True, exist_ok=True)
    for suffix, viewport in VIEWPORTS.items():
        page.set_viewport_size(viewport)
        page.goto(live_server.url + url)
        assert page.locator(selector).first.is_visible()
        path = OUT / f"{name}{suffix}.png"
        if part:
            page.locator(part).screenshot(path=path)
        else:
            page.screenshot(path=path, full_page=True)


def test_screenshot_monitor_with_imported_hits(live_server, browser):
    campaign = demo_campaign(target_hits=400, pay_per_hit=Decimal("0.15"))
    outputs = list(campaign.items.first().outputs.all())
    now = timezone.now()
    for n in range(120):
        end = now - timedelta(minutes=7 * n * (1 + n % 3) / 2)
        judged(outputs, end, 35 + n % 15, flag="too_fast" if n % 11 == 0 else "")
    crowd = make_annotator(campaign, source=Annotator.Source.CROWDFLOWER, external_id="cf")
    for n in range(60):
        judged(outputs, now - timedelta(days=30, minutes=n), 126, annotator=crowd)
    slips = {crowd: [111111, 111111, 90], make_annotator(campaign, name="annotator 7"): [1100]}
    for annotator, typed in slips.items():
        for score in typed:
            make_judged_hit(outputs, [score, *[50] * (len(outputs) - 1)], annotator)
    for _ in range(4):
        make_assignment(make_hit(outputs))
    url = reverse("admin:annotation_campaign_monitor", args=[campaign.pk])
    page = log_in(browser, live_server, DESKTOP)
    shoot(page, live_server, url, "monitor-imported", "#off-scale-annotators")


def test_screenshot_metrics_progress(live_server, browser):
    campaign = demo_campaign()
    outputs = list(campaign.items.first().outputs.all())
    for n in range(6):
        judged(outputs, timezone.now() - timedelta(minutes=n), 40)
    execute_run(
        RankingRun.objects.create(
            campaign=campaign, criterion=campaign.criteria.get(name="quality"), seed=1
        )
    )
    MetricRun.objects.create(
        campaign=campaign,
        status="running",
        started_at=timezone.now() - timedelta(seconds=95),
        heartbeat_at=timezone.now() + timedelta(hours=1),
        progress=2,
        progress_total=6,
    )
    url = reverse("ranking:results", args=[campaign.slug, "quality"]) + "#metrics"
    page = log_in(browser, live_server, DESKTOP)
    shoot(page, live_server, url, "metrics-progress", "#metrics-progress", part="#metrics")


def test_screenshot_bundle_page(live_server, browser):
    campaign = demo_campaign()
    outputs = list(campaign.items.first().outputs.all())
    for n in range(6):
        judged(outputs, timezone.now() - timedelta(minutes=n), 40)
    for protocol in ["e2e", "bt"]:
        run = RankingRun.objects.create(
            campaign=campaign,
            criterion=campaign.criteria.get(name="quality"),
            protocol=protocol,
            seed=1,
        )
        execute_run(run)
    judged(outputs, timezone.now(), 40)  # judgments changed since: the E2E run again
    execute_run(
        RankingRun.objects.create(
            campaign=campaign, criterion=campaign.criteria.get(name="quality"), seed=2
        )
    )
    url = reverse("admin:annotation_campaign_bundle", args=[campaign.pk])
    shoot(log_in(browser, live_server, DESKTOP), live_server, url, "bundle", "[type=submit]")


def upload_files(campaign, kind: str, paths, **fields) -> UploadJob:
    files = [SimpleUploadedFile(path.name, path.read_bytes()) for path in paths]
    return queue_upload(campaign, kind, files, **fields)


def test_screenshot_upload_pages(live_server, browser, e2e_data, settings, tmp_path):
    """The upload form with its recent uploads, an upload being imported, the 21 E2E
    output files imported at once, and a file that failed."""
    settings.UPLOAD_DIR = tmp_path
    campaign = make_campaign(slug="e2e", name="E2E NLG Challenge")
    assert execute_upload(upload_files(campaign, "items", [e2e_data / "testset_w_refs.csv"]))
    outputs = upload_files(campaign, "outputs", sorted((e2e_data / "outputs").glob("*.tsv")))
    assert execute_upload(outputs)
    bad = tmp_path / "more-items.csv"
    bad.write_text('mr,ref\n"name[The Mill], eatType[pub"," The Mill is a pub."\n')
    assert execute_upload(upload_files(campaign, "items", [bad]))
    running = upload_files(campaign, "ratings", [e2e_data / "human_ratings" / "quality.csv"])
    assert running.claim() is not None
    progress = ProgressFile(job_folder(running) / PROGRESS, files=1)
    progress.start(1, "quality.csv")
    progress.lines_read(2000, 2980)
    page = log_in(browser, live_server, DESKTOP)
    upload_url = reverse("admin:annotation_campaign_upload", args=[campaign.pk])
    shoot(page, live_server, upload_url, "upload-form", "input[type=submit]")
    failed = UploadJob.objects.get(status="failed")
    for name, job in [("running", running), ("done", outputs), ("failed", failed)]:
        url = reverse("admin:annotation_campaign_upload_job", args=[campaign.pk, job.pk])
        shoot(page, live_server, url, f"upload-{name}", "#upload-state")
