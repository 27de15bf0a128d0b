"""What ranking runs and generation jobs share: a status that workers claim atomically.

A job is queued by a web request or a command, then claimed by exactly one worker with a
conditional UPDATE. A job whose worker died (still "running" long after it started) may be
claimed again, since Celery redelivers the task of a lost worker.
"""

from datetime import timedelta

from django.db import models
from django.utils import timezone


class JobQuerySet(models.QuerySet):
    def pending(self):
        return self.filter(status__in=[BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING])


class BackgroundJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    queued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        abstract = True

    def claim(self, stale_after: timedelta, **reset) -> bool:
        """Mark the job running if it is queued, or running but stale; True if this caller
        got it. `reset` names fields to set at the same time (progress back to 0, say)."""
        stale = timezone.now() - stale_after
        claimable = models.Q(status=self.Status.QUEUED) | models.Q(
            status=self.Status.RUNNING, started_at__lt=stale
        )
        jobs = type(self).objects.filter(claimable, pk=self.pk)
        return jobs.update(status=self.Status.RUNNING, started_at=timezone.now(), **reset) == 1
