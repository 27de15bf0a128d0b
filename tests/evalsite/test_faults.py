"""Background jobs under the faults production meets, with real processes: a worker's pool
child killed, a whole worker killed, the broker killed and restarted.

Each test runs workers of its own on a Redis of its own (a redis-server on a free port),
so killing them harms nothing else. Jobs are created as rows only: the workers' beat sweep
finds them and sends them, as it does after a broker outage. Figures printed here (seconds
from a kill to the job done) are the ones docs/reliability.md quotes.
"""

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from django.db import transaction

from annotation.handout.assignment import next_assignment
from annotation.handout.shown import Answer, shown_outputs
from annotation.models import Judgment, Output
from generation.models import GenerationJob, HostedSystem
from ranking.models import RankingRun
from tests.conftest import wait_until, worker_environment
from tests.factories import (
    make_annotator,
    make_bulk_judged_campaign,
    make_campaign,
    make_item,
    make_system,
)
from tests.generation.backends.test_openai_backend import FakeOpenAIServer, server
from tests.handout import submit
from tests.processes import (
    REPO,
    RedisServer,
    kill_group,
    redis_available,
    start_worker,
)

pytestmark = [
    pytest.mark.celery,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not redis_available(), reason="needs redis-server (apt-get install redis)"),
]

SYSTEMS = 5


@pytest.fixture
def redis(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def workers(redis, tmp_path):
    """Starts workers on the test's Redis; stops whatever is left at the end."""
    started = []

    def start(*options: str):
        log = tmp_path / f"worker-{len(started)}.log"
        env = worker_environment(
            CELERY_BROKER_URL=redis.url,
            VAR_DIR=str(tmp_path),
            HOSTED_ENDPOINT_ALLOWED_HOSTS="127.0.0.1",  # the fake model endpoint's host
        )
        worker = start_worker(env, log, "--concurrency=1", *options)
        worker.log = log
        started.append(worker)
        return worker

    yield start
    # Killed, not stopped: a warm shutdown (tested in test_serve.py) waits out the task in
    # hand, seconds of each test here.
    for worker in started:
        kill_group(worker)


def pool_child_pid(job) -> int:
    return int(re.search(r"pid (\d+)$", job.worker).group(1))


def running_with_progress(model, pk, progress_field: str, at_least: int):
    job = model.objects.get(pk=pk)
    if job.status == "running" and getattr(job, progress_field) >= at_least:
        return job
    return None


def finished(model, pk):
    job = model.objects.get(pk=pk)
    return job if job.status in ("done", "failed") else None


def long_ranking_run(hits: int = 300, repetitions: int = 10_000) -> RankingRun:
    campaign = make_bulk_judged_campaign(hits)
    return RankingRun.objects.create(
        campaign=campaign,
        criterion=campaign.criteria.get(name="quality"),
        repetitions=repetitions,
        seed=5,
    )


def test_killed_pool_child_ranking_run_is_completed_once(workers):
    worker = workers()
    run = long_ranking_run()
    running = wait_until(
        lambda: running_with_progress(RankingRun, run.pk, "progress", 1),
        timeout=120,
        message="the worker did not start the ranking run",
    )
    os.kill(pool_child_pid(running), signal.SIGKILL)
    killed_at = time.monotonic()
    done = wait_until(lambda: finished(RankingRun, run.pk), timeout=180, interval=0.5)
    print(f"\nranking run, pool child killed: done {time.monotonic() - killed_at:.1f} s later")
    assert done.status == "done", done.error
    assert done.attempts == 2 and done.progress == 10_000
    assert done.results.count() == SYSTEMS
    assert worker.poll() is None, "the worker itself must survive the loss of a child"


def test_killed_whole_worker_ranking_run_is_completed_by_another(workers):
    first = workers()
    run = long_ranking_run()
    running = wait_until(
        lambda: running_with_progress(RankingRun, run.pk, "progress", 1),
        timeout=120,
        message="the worker did not start the ranking run",
    )
    kill_group(first)  # the main process, its pool and its beat, all at once
    killed_at = time.monotonic()
    workers()
    done = wait_until(lambda: finished(RankingRun, run.pk), timeout=180, interval=0.5)
    print(f"\nranking run, whole worker killed: done {time.monotonic() - killed_at:.1f} s later")
    assert done.status == "done", done.error
    assert done.attempts == 2 and done.worker != running.worker
    assert done.results.count() == SYSTEMS


# An OpenAI-compatible endpoint on 127.0.0.1 (the backend tests' own fake), made slow by
# the prompt below.
slow_model = server


def slow_hosted_system(server: FakeOpenAIServer, items: int) -> HostedSystem:
    campaign = make_campaign()
    for _ in range(items):
        make_item(campaign)
    settings = {
        "base_url": server.base_url,
        "model": "slow",
        "prompt_template": "slow {input}",  # the fake server waits 0.25 s on "slow"
        "max_concurrency": 1,
        "max_retries": 0,
    }
    system = make_system(campaign, name="remote")
    return HostedSystem.objects.create(
        system=system, backend="openai", settings=settings, batch_size=2
    )


# Killed after two batches of two, with four batches (2 s of the fake's answers) still to do.
GENERATED_ITEMS = 12


@pytest.mark.parametrize("kill", ["pool child", "whole worker"])
def test_killed_generation_job_is_completed_without_duplicates(workers, slow_model, kill):
    worker = workers()
    hosted = slow_hosted_system(slow_model, items=GENERATED_ITEMS)
    job = GenerationJob.objects.create(hosted=hosted)
    running = wait_until(
        lambda: running_with_progress(GenerationJob, job.pk, "items_done", 4),
        timeout=120,
        message="the worker did not start the generation job",
    )
    if kill == "pool child":
        os.kill(pool_child_pid(running), signal.SIGKILL)
    else:
        kill_group(worker)
        workers()
    killed_at = time.monotonic()
    done = wait_until(lambda: finished(GenerationJob, job.pk), timeout=180, interval=0.5)
    print(f"\ngeneration job, {kill} killed: done {time.monotonic() - killed_at:.1f} s later")
    assert done.status == "done", done.error
    assert done.attempts == 2
    assert done.items_failed == 0, done.item_errors  # [item, the backend's error] each
    outputs = Output.objects.filter(system=hosted.system)
    assert outputs.count() == GENERATED_ITEMS
    assert outputs.values("item").distinct().count() == GENERATED_ITEMS


def judge_hits(campaign, count: int, score_of) -> None:
    """Annotators submit `count` HITs through the annotation code the pages call."""
    criterion = campaign.criteria.get(name="quality")
    for n in range(count):
        assignment = next_assignment(make_annotator(campaign), criterion)
        answers = {
            shown.key: Answer(score=score_of(shown.slots[0].output.system.name))
            for shown in shown_outputs(assignment.hit)
        }
        with transaction.atomic():
            outcome = submit(assignment, criterion, answers, key=f"page-{n}")
        assert outcome.value == "saved"


def small_open_campaign(items: int = 40):
    campaign = make_campaign(min_seconds_per_hit=0, outputs_per_hit=3)
    systems = [make_system(campaign, name=f"sys{i}") for i in range(3)]
    for _ in range(items):
        item = make_item(campaign)
        for system in systems:
            Output.objects.create(item=item, system=system, text=f"{system.name} {item.pk}")
    return campaign


def test_broker_killed_and_restarted_loses_no_ranking(workers, redis):
    """Redis dies while annotators submit and while the worker computes a long run: every
    submission is saved, the worker lives on, and a ranking with every judgment follows."""
    worker = workers()
    campaign = small_open_campaign()
    score = {"sys0": 300, "sys1": 200, "sys2": 100}.get
    judge_hits(campaign, 10, score)
    long_run = long_ranking_run(hits=300, repetitions=10_000)
    wait_until(
        lambda: running_with_progress(RankingRun, long_run.pk, "progress", 1),
        timeout=120,
        message="the worker did not start the long run",
    )
    redis.kill()  # the worker holds an unacknowledged task now
    judge_hits(campaign, 10, score)  # annotators never notice: nothing they do needs it
    time.sleep(3)
    redis.start()  # same port, empty: every message it held is gone
    restarted_at = time.monotonic()
    judge_hits(campaign, 5, score)
    runs = RankingRun.objects.filter(campaign=campaign, protocol="e2e", status="done")
    ranked = wait_until(lambda: runs.filter(hits=25).first(), timeout=180, interval=0.5)
    seconds = time.monotonic() - restarted_at
    print(f"\nbroker restarted: ranking with all 25 HITs {seconds:.1f} s later")
    assert [r.system.name for r in ranked.results.all()] == ["sys0", "sys1", "sys2"]
    assert Judgment.objects.filter(assignment__hit__campaign=campaign).count() == 25 * 3
    done = wait_until(lambda: finished(RankingRun, long_run.pk), timeout=180, interval=0.5)
    assert done.status == "done", done.error
    assert worker.poll() is None, worker.log.read_text()[-3000:]
    assert "Unrecoverable error" not in worker.log.read_text()


def test_killed_rank_command_run_is_completed_by_a_worker(workers, tmp_path):
    """`manage.py rank` computes in its own process; killed, it leaves a run that a worker
    takes over once its heartbeat is stale."""
    workers()
    campaign = make_bulk_judged_campaign(hits=300)
    log = (tmp_path / "rank.log").open("w")
    command = [sys.executable, "manage.py", "rank", campaign.slug, "--runs", "10000"]
    rank = subprocess.Popen(
        command, cwd=REPO, env=worker_environment(), stdout=log, stderr=subprocess.STDOUT
    )
    runs = RankingRun.objects.filter(campaign=campaign)
    running = wait_until(
        lambda: runs.filter(status="running", progress__gte=1).first(),
        timeout=120,
        message="manage.py rank did not start its run",
    )
    rank.kill()
    rank.wait()
    done = wait_until(lambda: finished(RankingRun, running.pk), timeout=180, interval=0.5)
    assert done.status == "done", done.error
    assert done.attempts == 2 and f"pid {rank.pid}" not in done.worker
    assert done.results.count() == SYSTEMS
