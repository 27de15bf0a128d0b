"""Metric runs go to the "long" queue, so a worker serving rankings is never taken by them."""

import pytest
from django.db import transaction

from evalsite.celery import ALL_QUEUES, app
from ranking.automatic_metrics.models import MetricRun
from ranking.automatic_metrics.service import request_metrics
from ranking.models import RankingRun
from ranking.service import request_ranking
from tests.conftest import wait_until, worker_environment
from tests.factories import make_judged_hit, make_system_set
from tests.processes import start_worker, stop


def queue_of(task_name: str) -> str:
    return app.amqp.router.route({}, task_name)["queue"].name


def test_long_jobs_have_queues_of_their_own():
    assert queue_of("ranking.compute_ranking") == "default"
    assert queue_of("ranking.sweep") == "default"
    assert queue_of("ranking.compute_metrics") == "long"
    assert queue_of("generation.generate_outputs") == "generation"
    assert queue_of("api.deliver_webhook") == "outbound"
    # The tests' worker serves them all (one machine runs a worker per queue instead).
    assert set(ALL_QUEUES.split(",")) == {"default", "long", "generation", "outbound"}


@pytest.fixture
def ranking_worker(django_db_setup, django_db_blocker, tmp_path):
    """A worker as production's ranking worker: the default queue only."""
    with django_db_blocker.unblock():
        env = worker_environment()
    log = tmp_path / "worker.log"
    worker = start_worker(env, log, "--pool=solo", "-Q", "default")
    yield log
    stop(worker)


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_ranking_is_computed_while_a_metric_run_waits(ranking_worker):
    campaign, _, items = make_system_set(systems=3, items=6)
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [300, 200, 100])
    with transaction.atomic():
        metric_run = request_metrics(campaign)
        ranking = request_ranking(campaign.criteria.get(name="quality"), repetitions=20, seed=3)
    done = wait_until(
        lambda: RankingRun.objects.filter(pk=ranking.pk, status="done").first(),
        timeout=90,
        message="the ranking waited behind the metric run",
    )
    assert done.results.count() == 3
    # The ranking worker never took the metric run: it waits for a worker of the long queue.
    assert MetricRun.objects.get(pk=metric_run.pk).status == "queued"
    assert "long" not in ranking_worker.read_text().split("[queues]")[1].split("[tasks]")[0]
