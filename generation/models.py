"""Hosted systems (a system of a campaign plus the backend that generates its outputs) and
generation jobs."""

from django.core.exceptions import ValidationError
from django.db import models

from annotation.models import System
from annotation.secret_env import secret_env_policy
from generation.backends import BACKEND_LABELS, check_settings
from generation.endpoints import endpoint_policy
from jobs.claims import BackgroundJob, JobQuerySet

BACKEND_CHOICES = list(BACKEND_LABELS.items())


class HostedSystem(models.Model):
    system = models.OneToOneField(System, on_delete=models.CASCADE, related_name="hosting")
    backend = models.CharField(max_length=30, choices=BACKEND_CHOICES)
    settings = models.JSONField(
        default=dict,
        blank=True,
        help_text='Backend settings, e.g. {"checkpoint": "/models/t5-e2e", "num_beams": 4}',
    )
    batch_size = models.PositiveIntegerField(default=16)

    class Meta:
        ordering = ["system__campaign", "system__name"]

    def __str__(self) -> str:
        return f"{self.system} ({self.backend})"

    def clean(self) -> None:
        try:
            check_settings(
                self.backend, self.settings or {}, secret_env_policy(), endpoint_policy()
            )
        except ValueError as error:
            raise ValidationError({"settings": str(error)}) from None


class GenerationJob(BackgroundJob):
    hosted = models.ForeignKey(HostedSystem, on_delete=models.CASCADE, related_name="jobs")
    items_total = models.PositiveIntegerField(default=0, help_text="items lacking an output")
    items_done = models.PositiveIntegerField(default=0)
    outputs_created = models.PositiveIntegerField(default=0)
    items_failed = models.PositiveIntegerField(default=0)
    item_errors = models.JSONField(
        default=list, blank=True, help_text="the first failures: [item id, error]"
    )
    seconds = models.FloatField(null=True, blank=True)

    objects = JobQuerySet.as_manager()

    task_name = "generation.generate_outputs"
    task_id_argument = "job_id"

    def __str__(self) -> str:
        return f"job {self.pk}: {self.hosted.system.name} ({self.status})"
