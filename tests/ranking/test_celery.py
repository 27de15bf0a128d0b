"""The ranking through the real broker and a real worker process (Redis in CI)."""

import csv
import io

import pytest
from django.urls import reverse

from annotation.signals import hit_submitted
from ranking.models import RankingRun
from tests.conftest import wait_until
from tests.factories import make_judged_hit, make_system_set

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def judged_campaign():
    campaign, systems, items = make_system_set(systems=4, items=10)
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [400, 200, 100, 50])
    return campaign


def finished(run_id):
    run = RankingRun.objects.get(pk=run_id)
    return run if run.status in ("done", "failed") else None


def test_queued_run_is_computed_by_the_worker_and_shown(celery_worker_process, admin_client):
    campaign = judged_campaign()
    url = reverse("ranking:recompute", args=[campaign.slug, "quality"])
    admin_client.post(url, {"protocol": "e2e", "runs": 200, "seed": 1})
    run = wait_until(
        lambda: finished(RankingRun.objects.get().pk),
        timeout=90,
        message="the worker did not finish the ranking run",
    )
    assert run.status == "done", run.error
    assert [r.system.name for r in run.results.all()] == ["sys1", "sys2", "sys3", "sys4"]
    page = admin_client.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    assert "40 judgments in 10 HITs" in page.content.decode()
    response = admin_client.get(reverse("ranking:csv", args=[campaign.slug, "quality"]))
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert [r[1] for r in rows[1:]] == ["sys1", "sys2", "sys3", "sys4"]


def test_submitted_hits_queue_one_debounced_run_per_protocol(celery_worker_process, settings):
    settings.RANKING_DEBOUNCE_SECONDS = 2
    campaign = judged_campaign()
    for _ in range(5):
        hit_submitted.send(sender=None, campaign_id=campaign.pk, criterion="quality")
    runs = RankingRun.objects.filter(campaign=campaign)
    assert sorted(runs.values_list("protocol", flat=True)) == ["bootstrap", "e2e"]
    for run in runs:
        done = wait_until(lambda run=run: finished(run.pk), timeout=90)
        assert done.status == "done", done.error
        assert done.results.count() == 4
