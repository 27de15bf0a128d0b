"""What the Celery configuration promises, checked where a test can see it."""

import re

from django.conf import settings

from evalsite.celery import ONE_MACHINE, app, queue_worker_commands, worker_command
from tests.processes import REPO


def test_no_task_is_sent_with_a_countdown_or_eta():
    """A worker holding a countdown/ETA message when Redis drops dies with kombu 5.7
    (AttributeError on 'hostname' while it restores the message on a closed connection),
    and a held message would be the only record of the work: delays belong in the database,
    where the beat sweep reads them."""
    sources = [
        path
        for app in ("annotation", "ranking", "generation", "evalsite")
        for path in (REPO / app).rglob("*.py")
    ]
    delayed = re.compile(r"\b(countdown|eta)\s*=")
    offenders = [str(p) for p in sources if delayed.search(p.read_text())]
    assert offenders == []


def test_tasks_are_acknowledged_late_and_given_back_if_their_worker_dies():
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST
    assert settings.CELERY_WORKER_PREFETCH_MULTIPLIER == 1


def test_beat_sweeps_attention_rankings_generation_judges_and_webhooks_on_the_default_queue():
    schedule = settings.CELERY_BEAT_SCHEDULE
    tasks = {entry["task"] for entry in schedule.values()}
    assert tasks == {
        "annotation.sweep",
        "annotation.poll_prolific",
        "ranking.sweep",
        "generation.sweep",
        "judges.sweep",
        "api.sweep",
    }
    app.loader.import_default_modules()  # what a worker imports when it starts
    assert tasks <= set(app.tasks)
    routes = settings.CELERY_TASK_ROUTES
    assert "generation.sweep" not in routes and "generation.*" not in routes
    assert routes["generation.generate_outputs"] == {"queue": "generation"}
    assert routes["judges.judge_outputs"] == {"queue": "generation"}
    assert "judges.sweep" not in routes
    assert routes["ranking.compute_metrics"] == {"queue": "long"}
    # Requests to servers outside wait on them: never on the queue rankings need.
    assert routes["api.deliver_webhook"] == {"queue": "outbound"}
    assert routes["annotation.poll_prolific"] == {"queue": "outbound"}
    assert "api.sweep" not in routes and "annotation.sweep" not in routes


def test_one_worker_for_every_queue_embeds_beat():
    command = worker_command()
    assert "-B" in command
    assert command[command.index("-Q") + 1] == "default,long,generation,outbound"


def test_one_machine_runs_a_worker_per_queue_with_beat_in_the_rankings_one():
    commands = queue_worker_commands(ONE_MACHINE)
    queues = [command[command.index("-Q") + 1] for command in commands]
    assert queues == ["default", "long", "generation", "outbound"]
    assert ["-B" in command for command in commands] == [True, False, False, False]
    assert "--hostname=outbound@%h" in commands[3] and "--concurrency=2" in commands[0]
    no_generation = queue_worker_commands({**ONE_MACHINE, "generation": 0})
    assert [c[c.index("-Q") + 1] for c in no_generation] == ["default", "long", "outbound"]
