"""A metric run through the real broker and a real worker process."""

import pytest
from django.urls import reverse

from ranking.automatic_metrics.models import MetricRun
from tests.conftest import wait_until
from tests.factories import make_system_set

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def finished(run_id):
    run = MetricRun.objects.get(pk=run_id)
    return run if run.status in ("done", "failed") else None


def test_requested_metrics_are_computed_by_the_worker_and_shown(celery_worker_process, organiser):
    campaign, systems, items = make_system_set(systems=2, items=3)
    response = organiser.send(
        "POST", reverse("metrics:compute", args=[campaign.slug]), {"criterion": "quality"}
    )
    assert response.status_code == 302
    run = wait_until(
        lambda: finished(MetricRun.objects.get().pk),
        timeout=180,
        message="the worker did not finish the metric run",
    )
    assert run.status == "done", run.error
    assert run.systems == 2 and run.outputs == 6
    assert run.results.filter(metric="bleu").count() == 2
    page = organiser.get(response["Location"]).content.decode()
    assert "2 systems, 6 outputs" in page
