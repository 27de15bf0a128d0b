"""Automatic metric runs and their per-system results.

Like a ranking run, a metric run writes its results in the transaction that marks it done,
so pages show the newest finished run whole or not at all.
"""

from datetime import datetime

from django.db import models

from annotation.models import Campaign, System
from jobs.claims import BackgroundJob, JobQuerySet


class Metric(models.TextChoices):
    BLEU = "bleu", "BLEU"
    NIST = "nist", "NIST"
    METEOR = "meteor", "METEOR"
    ROUGE_L = "rouge_l", "ROUGE-L"
    CIDER = "cider", "CIDEr"
    CHRF = "chrf", "chrF"
    NORMALISED_AVERAGE = "normalised_average", "Normalised average"
    # LogicNLG's sentence BLEU for table items (ranking.metrics.sentence_bleu).
    BLEU1 = "bleu1", "BLEU-1 (LogicNLG)"
    BLEU2 = "bleu2", "BLEU-2 (LogicNLG)"
    BLEU3 = "bleu3", "BLEU-3 (LogicNLG)"
    # Slot errors of outputs for E2E MRs (ranking.metrics.slots): shares of outputs, and SER.
    ALL_REALISED = "all_realised", "All slots realised"
    ADDED = "added", "Slot added"
    MISSING = "missing", "Slot missing"
    WRONG_VALUE = "wrong_value", "Wrong value"
    SER = "ser", "Slot error rate"
    # RotoWire's number check (ranking.metrics.numbers): numbers attached to a player or
    # team, and the share of them found in that one's box- or line-score row.
    NUMBERS_CHECKED = "numbers_checked", "Numbers checked"
    NUMBERS_SUPPORTED = "numbers_supported", "Numbers in the box score"


WORD_OVERLAP_METRICS = [
    Metric.BLEU,
    Metric.NIST,
    Metric.METEOR,
    Metric.ROUGE_L,
    Metric.CIDER,
    Metric.CHRF,
    Metric.NORMALISED_AVERAGE,
]
SENTENCE_BLEU_METRICS = [Metric.BLEU1, Metric.BLEU2, Metric.BLEU3]
SLOT_METRICS = [Metric.ALL_REALISED, Metric.ADDED, Metric.MISSING, Metric.WRONG_VALUE, Metric.SER]
NUMBER_METRICS = [Metric.NUMBERS_CHECKED, Metric.NUMBERS_SUPPORTED]


class MetricRunQuerySet(JobQuerySet):
    def finished(self):
        return self.filter(status=MetricRun.Status.DONE).order_by("-finished_at", "-id")


class MetricRun(BackgroundJob):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="metric_runs")
    systems = models.PositiveIntegerField(default=0, help_text="systems with outputs")
    outputs = models.PositiveIntegerField(default=0, help_text="outputs read")
    missing = models.JSONField(
        default=dict, blank=True, help_text="metric -> why it could not be computed here"
    )
    implementations = models.JSONField(
        default=dict, blank=True, help_text="metric -> what computed it (versions, options)"
    )
    compute_seconds = models.FloatField(null=True, blank=True)
    # Kept up to date by the worker while it runs, for the page's progress bar and estimate.
    progress = models.PositiveIntegerField(default=0, help_text="systems scored so far")
    progress_total = models.PositiveIntegerField(default=0, help_text="systems to score")
    # When the first systems were scored, and how many: the pace is measured from there, as
    # the time before holds the start (reading, tokenising, METEOR loading its tables), which
    # the systems after do not pay again.
    first_scored_at = models.DateTimeField(null=True, blank=True, editable=False)
    first_scored = models.PositiveIntegerField(default=0, editable=False)

    objects = MetricRunQuerySet.as_manager()

    task_name = "ranking.compute_metrics"
    task_id_argument = "run_id"

    class Meta:
        db_table = "ranking_metricrun"  # ranking's table before this app was split off
        ordering = ["-queued_at", "-id"]
        indexes = [models.Index(fields=["campaign", "status"])]

    def __str__(self) -> str:
        return f"{self.campaign.slug} metrics ({self.status})"

    def seconds_left(self, now: datetime) -> float | None:
        """How long the systems still to score take at the pace measured since the first
        were scored; None until a system after those has been (one system's time, start
        included, said 33 min for an E2E run that ended 85 s later)."""
        if self.status != self.Status.RUNNING or self.first_scored_at is None:
            return None
        measured = self.progress - self.first_scored
        if measured <= 0:
            return None
        per_system = (now - self.first_scored_at).total_seconds() / measured
        return max(0.0, per_system * (self.progress_total - self.progress))


class MetricResult(models.Model):
    run = models.ForeignKey(MetricRun, on_delete=models.CASCADE, related_name="results")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="metric_results")
    metric = models.CharField(max_length=20, choices=Metric.choices)
    value = models.FloatField()
    outputs = models.PositiveIntegerField(help_text="the system's outputs that were scored")

    class Meta:
        db_table = "ranking_metricresult"  # ranking's table before the split
        ordering = ["run", "system", "metric"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "system", "metric"], name="metric_result_once_per_system"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.system} {self.metric} {self.value:.4f}"
