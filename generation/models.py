"""Hosted systems (a system of a campaign plus the backend that generates its outputs) and
generation jobs; automatic judges of a criterion, their scores and their jobs."""

from django.core.exceptions import ValidationError
from django.db import models

from annotation.models import CampaignCriterion, Output, System
from annotation.secret_env import secret_env_policy
from generation.backends import BACKEND_LABELS, check_settings
from generation.endpoints import endpoint_policy
from generation.judges import JUDGE_KINDS, check_judge_settings
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


class Judge(models.Model):
    """A named automatic scorer of a criterion's outputs (issue 29): its scores sit beside
    the crowd's (JudgeScore), are compared with them and may be fused with them; a judge
    never takes a HIT."""

    class Kind(models.TextChoices):
        METRIC = "metric", JUDGE_KINDS["metric"]
        OPENAI = "openai", JUDGE_KINDS["openai"]
        TRANSFORMERS = "transformers", JUDGE_KINDS["transformers"]

    criterion = models.ForeignKey(
        CampaignCriterion, on_delete=models.CASCADE, related_name="judges"
    )
    name = models.SlugField(max_length=60)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    settings = models.JSONField(
        default=dict,
        blank=True,
        help_text='metric: {"metric": "ser"} (bleu, chrf, meteor, ser); openai: the backend\'s'
        ' settings plus "rubric" (with {input} and {output}) and "scale" ([0, 100])',
    )
    batch_size = models.PositiveIntegerField(default=64)

    class Meta:
        ordering = ["criterion", "name"]
        constraints = [
            models.UniqueConstraint(fields=["criterion", "name"], name="judge_name_once"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"

    def clean(self) -> None:
        try:
            check_judge_settings(
                self.kind, self.settings or {}, secret_env_policy(), endpoint_policy()
            )
        except ValueError as error:
            raise ValidationError({"settings": str(error)}) from None


class JudgeScore(models.Model):
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="scores")
    output = models.ForeignKey(Output, on_delete=models.CASCADE, related_name="judge_scores")
    score = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["judge", "output"], name="judge_score_once"),
        ]

    def __str__(self) -> str:
        return f"{self.judge.name}: {self.score:g} for output {self.output_id}"


class JudgeJob(BackgroundJob):
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="jobs")
    outputs_total = models.PositiveIntegerField(default=0, help_text="outputs lacking a score")
    outputs_done = models.PositiveIntegerField(default=0)
    outputs_failed = models.PositiveIntegerField(default=0)
    output_errors = models.JSONField(
        default=list, blank=True, help_text="the first failures: [output id, error]"
    )
    seconds = models.FloatField(null=True, blank=True)

    objects = JobQuerySet.as_manager()

    task_name = "generation.judge_outputs"
    task_id_argument = "job_id"

    def __str__(self) -> str:
        return f"judge job {self.pk}: {self.judge.name} ({self.status})"
