"""The ranking through the real broker and a real worker process (Redis in CI)."""

import csv
import io

import pytest
from django.urls import reverse

from ranking.models import RankingRun
from ranking.service import fitting_protocols
from tests.conftest import wait_until
from tests.factories import make_judged_hit, make_system_set

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def worker_done_before_the_flush(celery_worker_process):
    """The module's worker outlives each test: let it finish the runs its sweep queued
    before the test's data is flushed, or the flush's TRUNCATE and the worker's writes
    deadlock (seen in CI)."""
    yield
    wait_until(
        lambda: not RankingRun.objects.pending().exists(),
        timeout=120,
        message="the worker did not finish its queued runs",
    )


def judged_campaign():
    campaign, systems, items = make_system_set(systems=4, items=10)
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [400, 200, 100, 50])
    return campaign


def finished(run_id):
    run = RankingRun.objects.get(pk=run_id)
    return run if run.status in ("done", "failed") else None


def test_queued_run_is_computed_by_the_worker_and_shown(celery_worker_process, organiser):
    campaign = judged_campaign()
    results = reverse("ranking:results", args=[campaign.slug, "quality"])
    organiser.submit(
        organiser.get(results),
        {"protocol": "e2e", "repetitions": 200, "seed": 1},
        action=reverse("ranking:recompute", args=[campaign.slug, "quality"]),
    )
    requested = RankingRun.objects.get(seed=1)  # the sweep queues its own (seed 0) too
    run = wait_until(
        lambda: finished(requested.pk),
        timeout=90,
        message="the worker did not finish the ranking run",
    )
    assert run.status == "done", run.error
    assert [r.system.name for r in run.results.all()] == ["sys1", "sys2", "sys3", "sys4"]
    # The run asked for is E2E's procedure, a tab beside the calibrated verdict it opens on.
    page = organiser.get(f"{results}?protocol=e2e")
    assert "40 judgments in 10 HITs" in page.content.decode()
    csv_url = reverse("ranking:csv", args=[campaign.slug, "quality"])
    response = organiser.get(f"{csv_url}?protocol=e2e")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert [r[1] for r in rows[1:]] == ["sys1", "sys2", "sys3", "sys4"]


def test_submitted_hits_are_ranked_by_the_sweep_without_any_message(celery_worker_process):
    """Nothing but the recorded change tells the worker: its beat finds it and queues a
    run per protocol, which includes every judgment."""
    campaign = judged_campaign()
    criterion = campaign.criteria.get(name="quality")
    runs = RankingRun.objects.filter(campaign=campaign, criterion=criterion)
    for protocol in fitting_protocols(criterion):
        run = wait_until(
            lambda protocol=protocol: runs.filter(
                protocol=protocol, status="done", hits=10
            ).first(),
            timeout=90,
            message=f"the sweep did not rank the submitted HITs ({protocol})",
        )
        assert run.results.count() == 4
    assert not runs.filter(status="failed").exists()
