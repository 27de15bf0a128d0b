"""Automatic judges of a criterion (issue 29), their scores and their jobs. A judge is a
named scorer of the criterion's outputs; its scores sit beside the crowd's, are compared
with them and fused with them by the ranking's fused view; a judge never takes a HIT.

An app of its own: it uses annotation (the outputs), generation (the OpenAI-compatible
backend and its endpoint policy) and ranking (the metrics, the fused estimator), which none
of them may import."""

from django.core.exceptions import ValidationError
from django.db import models

from annotation.models import CampaignCriterion, Output
from annotation.secret_env import secret_env_policy
from generation.endpoints import endpoint_policy
from jobs.claims import BackgroundJob, JobQuerySet

from .scorers import JUDGE_KINDS, check_judge_settings


class Judge(models.Model):
    """A named automatic scorer of a criterion's outputs (issue 29): its scores sit beside
    the crowd's (JudgeScore), are compared with them and may be fused with them; a judge
    never takes a HIT."""

    class Kind(models.TextChoices):
        METRIC = "metric", JUDGE_KINDS["metric"]
        OPENAI = "openai", JUDGE_KINDS["openai"]

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
    fused = models.BooleanField(
        default=False,
        help_text="run the criterion as humans + judge: the results page's fused view (PPI++)"
        " ranks the crowd's judgments with this judge's scores; one judge per criterion",
    )
    summary = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="agreement with the crowd and the fused ranking, as of summary_at",
    )
    summary_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["criterion", "name"]
        constraints = [
            models.UniqueConstraint(fields=["criterion", "name"], name="judge_name_once"),
            models.UniqueConstraint(
                fields=["criterion"],
                condition=models.Q(fused=True),
                name="one_fused_judge_per_criterion",
                violation_error_message="The criterion has a fused judge already: one only.",
            ),
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

    task_name = "judges.judge_outputs"
    task_id_argument = "job_id"

    def __str__(self) -> str:
        return f"judge job {self.pk}: {self.judge.name} ({self.status})"
