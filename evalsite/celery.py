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
    """The command line of a worker for both queues with beat embedded (`-B`), as one
    machine runs it (`manage.py serve`, the tests); `options` are further `celery worker`
    options. With several workers, run beat once on its own instead (`celery beat`)."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "evalsite",
        "worker",
        "-B",
        "-Q",
        ALL_QUEUES,
        "--loglevel=INFO",
        *options,
    ]
