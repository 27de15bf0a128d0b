import os
import sys

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

app = Celery("evalsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# The queues (settings.CELERY_TASK_ROUTES): "default" for rankings and the sweeps (seconds
# each), "long" for metric runs and imports (minutes), "generation" for models and judges,
# "outbound" for requests to servers outside (webhooks, Prolific), each bounded by its
# deadline but at the mercy of the server until then.
QUEUES = ("default", "long", "generation", "outbound")
ALL_QUEUES = ",".join(QUEUES)

# One machine (`manage.py workers`, `manage.py serve`): a worker process per queue, so that
# no kind of work waits behind another, and how many tasks each runs at once. Rankings
# keep their two slots whatever the long jobs and the receivers of webhooks do.
ONE_MACHINE = {"default": 2, "long": 1, "generation": 1, "outbound": 2}


def worker_command(*options: str, queues: str = ALL_QUEUES, beat: bool = True) -> list[str]:
    """The command line of a `celery worker` for `queues`, with beat embedded (`-B`) if
    `beat`; `options` are further `celery worker` options. Beat runs once per deployment."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "evalsite",
        "worker",
        *(["-B"] if beat else []),
        "-Q",
        queues,
        "--loglevel=INFO",
        *options,
    ]


def queue_worker_commands(concurrency: dict[str, int], *options: str) -> list[list[str]]:
    """One worker per queue with a concurrency above 0, named after its queue
    (default@host, ...); beat in the default queue's."""
    return [
        worker_command(
            f"--concurrency={count}",
            f"--hostname={queue}@%h",
            *options,
            queues=queue,
            beat=queue == "default",
        )
        for queue, count in concurrency.items()
        if count > 0
    ]
