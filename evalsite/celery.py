import os
import sys

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# The queues a worker on one machine consumes (settings.CELERY_TASK_ROUTES). In production
# rankings and sweeps take "default", metric runs "long", GPU workers "generation" only.
ALL_QUEUES = "default,long,generation"


def worker_command(*options: str) -> list[str]:
    """The command line of a worker for every queue with beat embedded (`-B`), as one
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
