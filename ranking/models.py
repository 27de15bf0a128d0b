"""Ranking runs and their per-system results.

A run's results are written in the same transaction that marks it done, so a failed or killed
run never shows half of its results; the results page reads the newest finished run.
"""

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.models import Campaign, CampaignCriterion, System
from jobs.claims import BackgroundJob, JobQuerySet
from ranking.protocols import DEFAULT, PROTOCOLS

# How often a ranking run repeats the TrueSkill run (R): the limits the results page has
# always had. With fewer, a 95% rank range rests on a handful of runs; with more, a run on
# the E2E ratings holds a worker for many minutes. The admin, the results page's form and
# the rank command all check them through the model field's validators.
MIN_REPETITIONS = 10
MAX_REPETITIONS = 10_000
DEFAULT_REPETITIONS = 200  # as E2E


def validate_protocol(name: str) -> None:
    """A run's protocol is one of the registry's (ranking.protocols): no field choices, so
    that adding a protocol needs no migration."""
    if name not in PROTOCOLS:
        raise ValidationError(f"Unknown protocol {name!r}: use one of {', '.join(PROTOCOLS)}.")


# How the note of a run that found nothing to rank begins (no comparisons of two systems
# yet, or for WMT's view no annotator whose scores vary): the run ends done, with no results,
# and pages show it as the state of the campaign, not as a fault. (Runs before this was so
# ended failed, with this at the start of their error.)
NOTHING_TO_RANK = "Nothing to rank: "


class RankingRunQuerySet(JobQuerySet):
    def for_criterion(self, criterion: CampaignCriterion, protocol: str | None = None):
        """The runs of a campaign's criterion: under one protocol, or under any."""
        runs = self.filter(criterion=criterion)
        return runs if protocol is None else runs.filter(protocol=protocol)

    def latest_judgment_counts(self, criterion: CampaignCriterion) -> "RankingRun | None":
        """The newest run of the criterion, any protocol or status, that has counted the
        judgments per system (every run counts them before it ranks)."""
        runs = self.for_criterion(criterion)
        return runs.exclude(judgments_per_system={}).order_by("-id").first()

    def finished(self):
        """Runs done with a ranking: those that found nothing to rank are left out."""
        done = self.filter(status=RankingRun.Status.DONE).exclude(note__startswith=NOTHING_TO_RANK)
        return done.order_by("-finished_at", "-id")

    def found_nothing(self):
        """Runs that found nothing to rank (done now; failed before that was so)."""
        done = models.Q(status=RankingRun.Status.DONE, note__startswith=NOTHING_TO_RANK)
        failed = models.Q(status=RankingRun.Status.FAILED, error__startswith=NOTHING_TO_RANK)
        return self.filter(done | failed).order_by("-finished_at", "-id")

    def latest_done(self) -> "RankingRun | None":
        """The newest finished run with a ranking: the one results pages and exports show."""
        return self.finished().first()

    def nothing_to_rank_now(self) -> "RankingRun | None":
        """Of one criterion's runs under one protocol: the newest that found nothing to
        rank, unless a ranking was queued after it. Then nothing to rank is the state the
        results page, its CSV and the datasheet report."""
        nothing = self.found_nothing().first()
        ranked = self.latest_done()
        if nothing is None or (ranked is not None and ranked.queued_at > nothing.queued_at):
            return None
        return nothing


class RankingRun(BackgroundJob):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="ranking_runs")
    criterion = models.ForeignKey(
        CampaignCriterion, on_delete=models.CASCADE, related_name="ranking_runs"
    )
    protocol = models.CharField(max_length=10, default=DEFAULT, validators=[validate_protocol])
    repetitions = models.PositiveIntegerField(
        default=DEFAULT_REPETITIONS,
        validators=[MinValueValidator(MIN_REPETITIONS), MaxValueValidator(MAX_REPETITIONS)],
        help_text="times the TrueSkill run is repeated with other random draws, the"
        " resamples of the items, or the calibrated verdict's permutations (R); WMT's view"
        " does not resample",
    )
    seed = models.BigIntegerField(default=0)
    progress = models.PositiveIntegerField(default=0, help_text="repetitions done")
    judgments = models.PositiveIntegerField(default=0)
    hits = models.PositiveIntegerField(default=0)
    comparisons = models.PositiveIntegerField(default=0)
    judgments_version = models.PositiveBigIntegerField(
        default=0, help_text="the criterion's judgments version that the input includes"
    )
    # System name -> [judgments counted, judgments left out (flagged, excluded)], counted by
    # the worker with the input: the results page shows them without counting per request.
    judgments_per_system = models.JSONField(default=dict, blank=True)
    # Composition policy -> counted HITs it composed ("" for imported ones), counted with
    # the input, so the results page says how the HITs were chosen without counting them.
    hits_per_composition = models.JSONField(default=dict, blank=True)
    load_seconds = models.FloatField(null=True, blank=True)
    compute_seconds = models.FloatField(null=True, blank=True)
    note = models.TextField(
        blank=True, help_text="what a finished run's reader should know about how it was computed"
    )
    judge_version = models.CharField(
        max_length=100,
        blank=True,
        help_text="the fused judge's scores that the input includes (the fused view)",
    )
    # Views whose claims hold for the whole table: every two ranked systems' difference,
    # its standard error, t and whether it is claimed (engine.joint.PairStatistics.rows),
    # and the critical |t| of the first step: the forecast and the published views' tabs
    # read them. {} for the others.
    pairs = models.JSONField(default=dict, blank=True)
    # Published procedures: in how many of `null_permutations` relabellings of this
    # campaign's design (labels permuted within items: identical systems) the procedure
    # claimed an order (ranking/permutation_check.py).
    null_permutations = models.PositiveIntegerField(default=0)
    null_ordered = models.PositiveIntegerField(default=0)

    objects = RankingRunQuerySet.as_manager()

    task_name = "ranking.compute_ranking"
    task_id_argument = "run_id"

    class Meta(BackgroundJob.Meta):
        indexes = [models.Index(fields=["criterion", "protocol", "status"])]

    @property
    def protocol_label(self) -> str:
        known = PROTOCOLS.get(self.protocol)
        return known.label if known else self.protocol

    @property
    def found_nothing_to_rank(self) -> bool:
        if self.status == self.Status.DONE:
            return self.note.startswith(NOTHING_TO_RANK)
        return self.status == self.Status.FAILED and self.error.startswith(NOTHING_TO_RANK)

    @property
    def nothing_to_rank_reason(self) -> str:
        return self.note if self.status == self.Status.DONE else self.error

    @property
    def outcome(self) -> str:
        """The state in words, for lists: a run that found nothing to rank says so."""
        if self.found_nothing_to_rank:
            return "Nothing to rank"
        return self.get_status_display()

    def __str__(self) -> str:
        where = str(self.criterion)
        return f"{where} {self.protocol} x{self.repetitions} ({self.status})"


class SystemResult(models.Model):
    """One system's line of a run's table. The fields are shared by the protocols, each
    filling them with what it has (TrueSkill / Bradley-Terry / WMT):

    - position: the table's order: mean mu / Arena rank, then rating / mean z.
    - cluster: significance cluster / Arena rank (1 + systems significantly better) /
      Wilcoxon cluster.
    - mu: mean mu over the runs / rating on Arena's scale, fit to all comparisons / mean z.
    - sigma: mean TrueSkill sigma / - / -.
    - mu_std: spread of mu over the runs / of the rating over the resamples / -.
    - ci_lo, ci_hi: - / 95% percentile interval of the rating over the resamples / -.
    - rank_lo, rank_hi: 95% rank range over the runs / over the resamples / the positions
      of the system's cluster.
    - comparisons: pairwise comparisons / the same / judgments with a z-score.
    - wins, losses: best-worst scaling's times best and times worst; empty for the others.
    - mean_raw: the z-score views' mean raw score, averaged as their z-scores are; empty for
      the others.
    - the fused view (humans + judge, PPI++): mu the fused mean z, mu_std its standard
      error, ci_lo and ci_hi its 95% interval, rank ranges and clusters from the intervals,
      comparisons the human judgments; effective_judgments and the humans-only interval
      (humans_ci_lo, humans_ci_hi) its own.
    """

    run = models.ForeignKey(RankingRun, on_delete=models.CASCADE, related_name="results")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="ranking_results")
    position = models.PositiveIntegerField(help_text="1 = best in the protocol's order")
    cluster = models.PositiveIntegerField(help_text="cluster, or Arena's rank (Bradley-Terry)")
    mu = models.FloatField(help_text="mean mu, Bradley-Terry rating or mean z: the score")
    sigma = models.FloatField(
        null=True, blank=True, help_text="mean TrueSkill sigma at the end of a run"
    )
    mu_std = models.FloatField(
        null=True, blank=True, help_text="standard deviation of the score over the runs"
    )
    ci_lo = models.FloatField(
        null=True, blank=True, help_text="lower end of the score's 95% interval"
    )
    ci_hi = models.FloatField(
        null=True, blank=True, help_text="upper end of the score's 95% interval"
    )
    rank_lo = models.PositiveIntegerField(help_text="best rank of the range")
    rank_hi = models.PositiveIntegerField(help_text="worst rank of the range")
    comparisons = models.PositiveIntegerField(help_text="comparisons, or judgments (WMT)")
    # Best-worst scaling only: times chosen best and times chosen worst.
    wins = models.PositiveIntegerField(null=True, blank=True, help_text="times best (bws)")
    losses = models.PositiveIntegerField(null=True, blank=True, help_text="times worst (bws)")
    # The z-score views only (wmt, webnlg): the raw scores averaged as the z-scores are.
    mean_raw = models.FloatField(
        null=True, blank=True, help_text="mean raw score (the z-score views)"
    )
    # The fused view only: the human judgments the fused estimate is worth, and the
    # humans-only 95% interval beside the fused one (ci_lo, ci_hi).
    effective_judgments = models.FloatField(
        null=True, blank=True, help_text="human judgments the fused estimate is worth (fused)"
    )
    humans_ci_lo = models.FloatField(
        null=True, blank=True, help_text="lower end of the humans-only 95% interval (fused)"
    )
    humans_ci_hi = models.FloatField(
        null=True, blank=True, help_text="upper end of the humans-only 95% interval (fused)"
    )

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "system"], name="result_once_per_system"),
            models.UniqueConstraint(fields=["run", "position"], name="result_position_once"),
        ]

    def __str__(self) -> str:
        return f"{self.position}. {self.system} {self.mu:.3f}"
