"""What ranking runs and generation jobs share: a claim that survives crashes.

A job row is the record that work is due; a broker message only makes a worker look sooner.
A worker claims a job with a conditional UPDATE that gives it a fresh claim token, and
keeps the job's heartbeat fresh while it works. Everything it writes afterwards (progress,
results, the final status) is a compare-and-set on that token, so a worker that lost its
claim (it stalled, and another worker took the job over) can neither store results nor
change the status. A job whose heartbeat is older than the stale threshold is claimable
again: a redelivered message, or the periodic sweep, hands it to a live worker.
"""

import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable
from contextlib import suppress
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import connection, models, transaction
from django.utils import timezone

log = logging.getLogger(__name__)


class ClaimLost(Exception):
    """Another worker holds the job now: stop, and write nothing more."""


def stale_after() -> timedelta:
    return timedelta(seconds=settings.JOB_STALE_SECONDS)


def abandoned_q() -> models.Q:
    """Running, but its worker has not been heard of for longer than the threshold (or
    never: rows from before heartbeats)."""
    stale = timezone.now() - stale_after()
    return models.Q(status=BackgroundJob.Status.RUNNING) & (
        models.Q(heartbeat_at__lt=stale) | models.Q(heartbeat_at__isnull=True)
    )


class JobQuerySet(models.QuerySet):
    def pending(self):
        """Queued, or running with a live worker: what pages show as 'in progress'."""
        queued_or_running = [BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING]
        return self.filter(status__in=queued_or_running).exclude(abandoned_q())

    def abandoned(self):
        return self.filter(abandoned_q())

    def unfinished(self):
        """Queued or running, abandoned ones too (the sweep hands those to a live worker):
        what a new request for the same work joins instead of starting it twice."""
        return self.filter(status__in=[BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING])

    def needing_a_worker(self):
        """Jobs that may have no message: queued or abandoned, and not sent for a while (a
        publish that failed, a broker restarted without persistence, a worker killed)."""
        resend = timezone.now() - timedelta(seconds=settings.JOB_RESEND_SECONDS)
        not_sent_lately = models.Q(sent_at__isnull=True) | models.Q(sent_at__lt=resend)
        queued = models.Q(status=BackgroundJob.Status.QUEUED)
        return self.filter(queued | abandoned_q()).filter(not_sent_lately)


JobManager = models.Manager.from_queryset(JobQuerySet)


class BackgroundJob(models.Model):
    # Each kind of job sets its own manager over a JobQuerySet (or a subclass of it); the
    # annotation tells the type checker what the base's methods may rely on.
    objects: JobManager

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    queued_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True, help_text="last handed to the broker")
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    claim_token = models.CharField(max_length=32, blank=True, editable=False)
    worker = models.CharField(max_length=200, blank=True, help_text="host and pid holding it")
    attempts = models.PositiveSmallIntegerField(default=0, help_text="times a worker took it")
    error = models.TextField(blank=True)

    # The Celery task that does the job, by name (so models need not import tasks), and
    # the keyword its id goes by.
    task_name: str
    task_id_argument: str

    class Meta:
        abstract = True
        ordering = ["-queued_at", "-id"]  # newest first, so that `.pending().first()` is the newest

    def send_to_worker(self) -> None:
        """Hand the job to the broker once the current transaction commits (at once outside
        one), so a worker never looks for a row that is not committed yet."""
        transaction.on_commit(lambda: send_now(type(self), self.pk))

    def claim(self, **reset) -> str | None:
        """Take the job if it is queued, or running with a stale heartbeat; the claim token
        if this caller got it, else None. `reset` names fields to set at the same time
        (progress back to 0, say). A job taken too often fails instead: it is more likely
        to kill its workers than to be unlucky."""
        now = timezone.now()
        claimable = models.Q(status=self.Status.QUEUED) | abandoned_q()
        jobs = type(self).objects.filter(claimable, pk=self.pk)
        if jobs.filter(attempts__gte=settings.JOB_MAX_ATTEMPTS).update(
            status=self.Status.FAILED,
            finished_at=now,
            claim_token="",
            error=f"gave up after {settings.JOB_MAX_ATTEMPTS} attempts: its workers died",
        ):
            return None
        token = secrets.token_hex(16)
        taken = jobs.update(
            status=self.Status.RUNNING,
            claim_token=token,
            worker=f"{socket.gethostname()} pid {os.getpid()}",
            started_at=now,
            heartbeat_at=now,
            attempts=models.F("attempts") + 1,
            **reset,
        )
        if not taken:
            return None
        self.claim_token = token
        return token

    def update_as_holder(self, token: str, **fields) -> None:
        """Write `fields` only while `token` is still the claim; ClaimLost otherwise."""
        holder = type(self).objects.filter(
            pk=self.pk, claim_token=token, status=self.Status.RUNNING
        )
        if holder.update(heartbeat_at=timezone.now(), **fields) != 1:
            raise ClaimLost(f"{self._meta.verbose_name} {self.pk} is held by another worker")

    def finish_as_holder(self, token: str, status: str, **fields) -> None:
        self.update_as_holder(token, status=status, finished_at=timezone.now(), **fields)


class Heartbeat:
    """Keeps a claimed job's heartbeat fresh from a thread while the work runs, so a long
    step (a model loading, a compiled loop) never makes a live job look abandoned.

        with Heartbeat(job, token) as heartbeat:
            ...
            heartbeat.check()  # ClaimLost once another worker has taken the job
    """

    def __init__(self, job: BackgroundJob, token: str) -> None:
        self.job, self.token = job, token
        self.lost = threading.Event()
        self._stop = threading.Event()
        # Named by the row's id, not str(job): a run's str reads its criterion and campaign.
        name = f"heartbeat-{job._meta.model_name}-{job.pk}"
        self._thread = threading.Thread(target=self._beat, daemon=True, name=name)

    def __enter__(self) -> "Heartbeat":
        # Inside a transaction (a command's --atomic, a test) another connection could not
        # see the job row; the caller's own progress writes keep the heartbeat then.
        if not connection.in_atomic_block:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def check(self) -> None:
        if self.lost.is_set():
            raise ClaimLost(f"job {self.job.pk} is held by another worker")

    def _beat(self) -> None:
        try:
            while not self._stop.wait(settings.JOB_HEARTBEAT_SECONDS):
                try:
                    self.job.update_as_holder(self.token)
                except ClaimLost:
                    self.lost.set()
                    return
                except Exception:  # a dropped connection: the next beat reconnects
                    log.warning("heartbeat of job %s failed", self.job.pk, exc_info=True)
                    connection.close()
        finally:
            connection.close()  # this thread's own connection


def work_as_holder(
    job: BackgroundJob,
    token: str,
    work: Callable[[Heartbeat], None],
    *,
    failure_fields: Callable[[], dict] = dict,
    expected: tuple[type[Exception], ...] = (),
) -> bool:
    """Do `work(heartbeat)` for a job this worker has claimed with `token`, the heartbeat
    kept fresh meanwhile; `work` stores the results and finishes the job.

    False if another worker took the job over: nothing more is written. If `work` fails,
    the error (and `failure_fields()`) is stored and the job marked failed, while this
    worker still holds it; the exception is raised again unless it is of an `expected`
    kind (a job that cannot be done, which is no fault of the code)."""
    name = f"{job._meta.verbose_name} {job.pk}"
    try:
        with Heartbeat(job, token) as heartbeat:
            work(heartbeat)
    except ClaimLost:
        log.warning("%s was taken over by another worker", name)
        return False
    except Exception as error:
        log.exception("%s failed", name)
        with suppress(ClaimLost):
            fields = {"error": str(error)[:2000], **failure_fields()}
            job.finish_as_holder(token, BackgroundJob.Status.FAILED, **fields)
        if not isinstance(error, expected):
            raise
    return True


def send_now(model: type[BackgroundJob], pk: int) -> bool:
    """Publish the job's message; False if the broker is out of reach. The row stays
    queued then, and the sweep sends it again: a broker outage delays work, never loses
    it. That is also why a publish is not retried here, which would hold the request."""
    try:
        current_app.send_task(model.task_name, kwargs={model.task_id_argument: pk}, retry=False)
    except Exception as error:
        log.warning("%s %s not sent (%r); the sweep will send it", model.__name__, pk, error)
        return False
    model.objects.filter(pk=pk).update(sent_at=timezone.now())
    return True


def send_jobs_needing_a_worker(model: type[BackgroundJob], limit: int = 100) -> int:
    """The sweep's part for one kind of job: send again what may have no message."""
    pks = list(model.objects.needing_a_worker().order_by("pk").values_list("pk", flat=True)[:limit])
    return sum(send_now(model, pk) for pk in pks)
