import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from ranking.automatic_metrics.export import write_correlations_csv, write_metrics_csv
from ranking.automatic_metrics.models import MetricRun
from ranking.automatic_metrics.service import execute_metric_run, latest_rankings, metric_table

COLUMNS = [
    ("bleu", "BLEU", 7),
    ("nist", "NIST", 7),
    ("meteor", "METEOR", 7),
    ("rouge_l", "ROUGE-L", 7),
    ("cider", "CIDEr", 7),
    ("chrf", "chrF", 7),
    ("normalised_average", "norm.avg", 8),
    ("bleu1", "BLEU-1", 7),
    ("bleu2", "BLEU-2", 7),
    ("bleu3", "BLEU-3", 7),
    ("ser", "SER", 7),
    ("numbers_supported", "numbers", 7),  # RotoWire's number check: the share supported
]


class Command(BaseCommand):
    help = (
        "Compute automatic metrics for every system of a campaign that has outputs, here (no "
        "worker): BLEU, NIST, METEOR, ROUGE-L, CIDEr (as the E2E challenge computed them), "
        "chrF, slot errors for E2E MR items, LogicNLG's BLEU-1/2/3 for table items, RotoWire's "
        "number check for box-score items; store them for the results page and print them."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument(
            "--csv", help="also write the metrics CSV here ('-' for standard output)"
        )
        parser.add_argument(
            "--correlations-csv",
            help="also write each metric's correlation with the latest E2E protocol ranking "
            "of each criterion (TrueSkill mu) here ('-' for standard output)",
        )

    def handle(self, campaign, csv, correlations_csv=None, **options):
        campaign_row = Campaign.objects.filter(slug=campaign).first()
        if campaign_row is None:
            raise CommandError(f"no campaign '{campaign}'")
        run = MetricRun.objects.create(campaign=campaign_row)
        execute_metric_run(run)
        run.refresh_from_db()
        if run.status != MetricRun.Status.DONE:
            raise CommandError(f"metrics failed: {run.error}")
        table = metric_table(run)
        self.print_table(run, table)
        if csv:
            self.write_csv_file(csv, lambda out: write_metrics_csv(out, table))
        if correlations_csv:
            rankings = latest_rankings(campaign_row)
            self.write_csv_file(
                correlations_csv, lambda out: write_correlations_csv(out, table, rankings)
            )

    def print_table(self, run: MetricRun, table) -> None:
        self.stdout.write(
            f"{run.systems} systems, {run.outputs} outputs; {run.compute_seconds:.1f} s"
        )
        for metric, reason in run.missing.items():
            self.stdout.write(f"{metric}: not computed: {reason}")
        shown = [column for column in COLUMNS if column[0] in table.metrics]
        self.stdout.write(
            f"{'system':<16}" + "".join(f"{label:>{width + 1}}" for _, label, width in shown)
        )
        for row in table.rows:
            cells = [
                f"{'':>{width + 1}}" if row.get(m) is None else f"{row.get(m):>{width + 1}.4f}"
                for m, _, width in shown
            ]
            self.stdout.write(f"{row.system:<16}" + "".join(cells))

    def write_csv_file(self, target: str, write: Callable[[TextIO], None]) -> None:
        if target == "-":
            write(sys.stdout)
            return
        with Path(target).open("w", newline="", encoding="utf-8") as out:
            write(out)
        self.stdout.write(f"CSV written to {target}")
