import os
import sys

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# The queues a worker on one machine consumes; GPU workers in production take "generation" only.
ALL_QUEUES = "default,generation"


def worker_command(*options: str) -> list[str]:
    """The command line of a worker for both queues, as `manage.py serve` and the tests
    start it; `options` are further `celery worker` options."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "evalsite",
        "worker",
        "-Q",
        ALL_QUEUES,
        "--loglevel=INFO",
        *options,
    ]
