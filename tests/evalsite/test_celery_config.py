"""What the Celery configuration promises, checked where a test can see it."""

import re

from django.conf import settings

from evalsite.celery import app, worker_command
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


def test_one_machine_worker_embeds_beat_and_consumes_every_queue():
    command = worker_command()
    assert "-B" in command
    assert command[command.index("-Q") + 1] == "default,long,generation"
