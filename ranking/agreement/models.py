"""Agreement between the annotators of a ranking run's judgments.

Measured by the worker that computes the run, and written in the transaction that marks the
run done (ranking.service.store_results), so the results page reads a few stored numbers
however many judgments there are. ranking/engine/agreement.py says how they are measured.
"""

from django.db import models

from annotation.models import Annotator


class RunAgreement(models.Model):
    run = models.OneToOneField(
        "ranking.RankingRun", on_delete=models.CASCADE, related_name="agreement"
    )
    alpha = models.FloatField(
        null=True, help_text="Krippendorff's alpha; empty where no pair was judged twice"
    )
    alpha_low = models.FloatField(null=True, help_text="95% bootstrap interval, low end")
    alpha_high = models.FloatField(null=True, help_text="95% bootstrap interval, high end")
    rounds = models.PositiveIntegerField(help_text="bootstrap rounds (items resampled)")
    units = models.PositiveIntegerField(help_text="(item, system) pairs judged at least twice")
    judgments = models.PositiveIntegerField(help_text="counted judgments of those pairs")
    seconds = models.FloatField(help_text="time to load the judgments and measure")

    class Meta:
        db_table = "ranking_runagreement"  # ranking's table before this app was split off

    def __str__(self) -> str:
        return f"agreement of run {self.run_id}: alpha {self.alpha}"


class AnnotatorAgreement(models.Model):
    """One annotator's work in the run's criterion, and how it compares with the others'."""

    run = models.ForeignKey(
        "ranking.RankingRun", on_delete=models.CASCADE, related_name="annotator_agreement"
    )
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="+")
    hits = models.PositiveIntegerField(help_text="HITs submitted")
    flagged = models.PositiveIntegerField(help_text="of those, flagged (too fast)")
    median_seconds = models.FloatField(null=True, help_text="median time per HIT")
    correlation = models.FloatField(
        null=True,
        help_text="Pearson's r of their normalised ranks with the mean of the others' on the "
        "same (item, system) pairs; empty with fewer than 3 such pairs",
    )
    shared_units = models.PositiveIntegerField(
        help_text="(item, system) pairs they share with others"
    )
    excluded = models.BooleanField(help_text="excluded from rankings when the run was computed")

    class Meta:
        db_table = "ranking_annotatoragreement"  # ranking's table before the split
        ordering = ["run", "correlation", "annotator"]
        constraints = [
            models.UniqueConstraint(fields=["run", "annotator"], name="annotator_agreement_once")
        ]

    def __str__(self) -> str:
        return f"{self.annotator} in run {self.run_id}"

    @property
    def flagged_share(self) -> float:
        return self.flagged / self.hits if self.hits else 0.0
