"""One machine's workers as docs/production.md starts them (`manage.py workers`: a Celery
worker per queue, beat in the rankings' one), on a Redis of the test's own, keep rankings
as fresh as they are alone while outside servers and long jobs hold the other queues:

- a webhook receiver that answers `HTTP/1.1 200 OK` and then one byte every 5 s, and one
  that never answers, holding both workers of the outbound queue (before: they held both
  processes of the one worker, and rankings waited 60-200 s);
- two campaigns' metric runs holding the long queue (before: a recompute waited 136.7 s).

Rankings follow judgments through the real sweep (beat every second, 1 s debounce), and
each test measures the latency from the judgments' commit to the finished ranking that
counts them, alone and with the other queues held, and prints both. What it asserts is
the order of events, not a time: the ranking is done while the receivers still hold their
deliveries and the long jobs their worker.
"""

import os
import signal
import time

import pytest
from django.db import connection
from django.db.models import F

from annotation.models import Campaign
from api.models import Event, WebhookDelivery
from ranking.automatic_metrics.models import MetricRun
from ranking.models import RankingRun
from tests.api.test_webhooks import endpoint_for
from tests.conftest import pause_between_transactions, wait_until, worker_environment
from tests.evalsite.test_faults import judge_hits, pool_child_pid, small_open_campaign
from tests.factories import make_campaign, make_system_set
from tests.processes import RedisServer, kill_group, redis_available, start_worker_group
from tests.receivers import SlowReceiver

pytestmark = [
    pytest.mark.celery,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not redis_available(), reason="needs redis-server (apt-get install redis)"),
]

SCORES = {"sys0": 300, "sys1": 200, "sys2": 100}


@pytest.fixture(scope="module")
def one_machine_workers(django_db_setup, django_db_blocker, tmp_path_factory):
    """Redis of its own and `manage.py workers` with its defaults. Deliveries may reach
    loopback, and get 600 s each: the receivers hold them for the whole test (the
    deadline itself: tests/api/test_webhook_limits.py)."""
    folder = tmp_path_factory.mktemp("one-machine")
    redis = RedisServer(folder)
    redis.start()
    with django_db_blocker.unblock():
        env = worker_environment(
            CELERY_BROKER_URL=redis.url,
            VAR_DIR=str(folder),
            WEBHOOK_ALLOW_PRIVATE="1",
            WEBHOOK_TIMEOUT_SECONDS="600",
        )
    log = folder / "workers.log"
    group = start_worker_group(env, log)
    group.log = log
    yield group
    # Killed, not stopped: a warm shutdown waits out the tasks in hand (tests/evalsite/
    # test_serve.py tests it), and four workers' took 30 s of CI's run.
    kill_group(group)
    redis.kill()


@pytest.fixture
def one_machine(one_machine_workers, transactional_db):
    """The module's workers, running during the test. Paused between tests, at a moment
    none of them is inside a transaction: their sweep, every second, and the teardown's
    TRUNCATE of every table deadlocked (tests/conftest.py's `celery_worker_process`)."""
    os.killpg(one_machine_workers.pid, signal.SIGCONT)
    yield one_machine_workers
    pause_between_transactions(one_machine_workers, whole_group=True)


def ranking_latency(campaign: Campaign, hits: int) -> float:
    """Seconds from now (the judgments committed) until the ranking of all `hits` is done."""
    started = time.monotonic()
    runs = RankingRun.objects.filter(campaign=campaign, protocol="e2e", status="done", hits=hits)
    wait_until(runs.exists, timeout=300, interval=0.1, message=f"no ranking of {hits} HITs")
    return time.monotonic() - started


def test_slow_webhook_receivers_leave_rankings_as_fresh_as_before(one_machine, settings):
    campaign = small_open_campaign()
    judge_hits(campaign, 5, SCORES.get)
    alone = ranking_latency(campaign, hits=5)

    settings.WEBHOOK_ALLOW_PRIVATE = True  # to save the endpoints in this process
    trickling, silent = SlowReceiver("trickle", interval=5), SlowReceiver("silent")
    try:
        other = make_campaign()
        for receiver in (trickling, silent):
            endpoint_for(other, receiver.url, [Event.CAMPAIGN_COMPLETE])
        Campaign.objects.filter(pk=other.pk).update(status=Campaign.Status.CLOSED)
        wait_until(
            lambda: trickling.holding == 1 and silent.holding == 1,
            timeout=120,
            message=f"the receivers got no delivery:\n{one_machine.log.read_text()[-3000:]}",
        )
        judge_hits(campaign, 5, SCORES.get)
        held = ranking_latency(campaign, hits=10)
        # Done while both receivers still hold the outbound queue's two workers.
        assert (trickling.holding, silent.holding) == (1, 1)
        assert WebhookDelivery.objects.filter(status="pending").count() == 2
    finally:
        trickling.close()
        silent.close()
    print(
        f"\nranking latency: {alone:.1f} s alone, {held:.1f} s while a trickling and a silent"
        " webhook receiver hold both outbound workers"
    )
    ranked = RankingRun.objects.get(campaign=campaign, protocol="e2e", hits=10)
    assert [r.system.name for r in ranked.results.all()] == ["sys0", "sys1", "sys2"]


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL: a long job frozen mid-write would lock a whole SQLite file",
)
def test_a_ranking_completes_while_two_long_jobs_hold_the_long_queue(one_machine):
    """Two campaigns' metric runs: the long queue's worker takes one, the other waits for
    it. The one taken is frozen (SIGSTOP of its pool process, after its claim and before it
    stores anything), so that it stays long however fast the machine is."""
    campaign = small_open_campaign()
    judge_hits(campaign, 5, SCORES.get)
    alone = ranking_latency(campaign, hits=5)

    # Long because frozen, not because large: METEOR's start (its paraphrase table) is most
    # of a run this size, and the test waits for the frozen one to finish.
    runs = [MetricRun.objects.create(campaign=make_system_set(systems=4, items=40)[0])]
    runs.append(MetricRun.objects.create(campaign=make_system_set(systems=4, items=40)[0]))
    taken = wait_until(
        lambda: MetricRun.objects.filter(
            pk__in=[r.pk for r in runs],
            status="running",
            progress_total__gt=0,
            progress__lt=F("progress_total") - 1,  # scoring: no transaction open
        ).first(),
        timeout=120,
        interval=0.05,
        message=f"no metric run started:\n{one_machine.log.read_text()[-3000:]}",
    )
    long_job = pool_child_pid(taken)
    os.kill(long_job, signal.SIGSTOP)
    try:
        judge_hits(campaign, 5, SCORES.get)
        held = ranking_latency(campaign, hits=10)
        statuses = sorted(MetricRun.objects.values_list("status", flat=True))
        assert statuses == ["queued", "running"]  # both unfinished: one held, one waiting
    finally:
        # The waiting run is deleted, not computed (its task finds no row and returns): a
        # second METEOR start would prove nothing more. The frozen one finishes before the
        # test's tables are emptied: a run still writing would deadlock the teardown's
        # TRUNCATE.
        MetricRun.objects.filter(status="queued").delete()
        os.kill(long_job, signal.SIGCONT)
        wait_until(
            lambda: not MetricRun.objects.exclude(status__in=["done", "failed"]).exists(),
            timeout=300,
            message="the metric runs did not finish",
        )
    print(
        f"\nranking latency: {alone:.1f} s alone, {held:.1f} s while two campaigns' metric"
        " runs hold the long queue"
    )
