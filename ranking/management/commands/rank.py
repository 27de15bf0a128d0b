import sys
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign, Criterion
from ranking.export import write_csv
from ranking.models import DEFAULT_REPETITIONS, Protocol, RankingRun, RunAgreement
from ranking.service import execute_run

# What the table's first two columns hold where it is not TrueSkill (SystemResult's docstring).
HEADERS: dict[str, tuple[str, str]] = {
    Protocol.BRADLEY_TERRY: ("rank", "rating"),
    Protocol.WMT: ("cluster", "mean z"),
}


class Command(BaseCommand):
    help = (
        "Compute a ranking (TrueSkill clusters, Bradley-Terry or WMT's view) for a campaign and "
        "criterion here (no worker), store it for the results page and print the table."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", metavar="campaign", help="campaign slug")
        parser.add_argument(
            "--criterion",
            dest="criterion_name",
            choices=Criterion.values,
            default=Criterion.QUALITY,
        )
        parser.add_argument(
            "--repetitions",
            "--runs",
            type=int,
            default=DEFAULT_REPETITIONS,
            help="how often the TrueSkill run is repeated, or Bradley-Terry resampled (R)",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--protocol", choices=Protocol.values, default=Protocol.E2E)
        parser.add_argument("--csv", help="also write the CSV here ('-' for standard output)")

    def handle(self, slug, criterion_name, repetitions, seed, protocol, csv, **options):
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            raise CommandError(f"no campaign '{slug}'")
        run = RankingRun(
            campaign=campaign,
            criterion=criterion_name,
            protocol=protocol,
            repetitions=repetitions,
            seed=seed,
        )
        try:
            run.full_clean()
        except ValidationError as error:
            errors = [f"--{name}: {' '.join(e)}" for name, e in error.message_dict.items()]
            raise CommandError("; ".join(errors)) from None
        run.save()
        execute_run(run)
        run.refresh_from_db()
        if run.status != RankingRun.Status.DONE:
            raise CommandError(f"ranking failed: {run.error}")
        self.print_table(run)
        if csv:
            self.write_csv_file(run, csv)

    def print_table(self, run: RankingRun) -> None:
        self.stdout.write(
            f"{run.get_protocol_display()}; {repetitions_text(run)}; "
            f"{run.judgments} judgments, {run.hits} HITs, {run.comparisons} comparisons; "
            f"{run.compute_seconds:.2f} s"
        )
        group, score = HEADERS.get(run.protocol, ("cluster", "mu"))
        self.stdout.write(f"{group:>7} {score:>7} {'range':>7}  system")
        previous = None
        for row in run.results.select_related("system"):
            if previous is not None and row.cluster != previous:
                self.stdout.write("-" * 40)
            cluster = str(row.cluster) if row.cluster != previous else ""
            span = f"{row.rank_lo}-{row.rank_hi}"
            self.stdout.write(f"{cluster:>7} {row.mu:7.3f} {span:>7}  {row.system.name}")
            previous = row.cluster
        self.print_agreement(run)

    def print_agreement(self, run: RankingRun) -> None:
        agreement = RunAgreement.objects.filter(run=run).first()
        if agreement is None or agreement.alpha is None:
            return
        self.stdout.write(
            f"Krippendorff's alpha {agreement.alpha:.3f} (95% interval {agreement.alpha_low:.3f} "
            f"to {agreement.alpha_high:.3f}, {agreement.rounds} rounds) on {agreement.units} "
            f"(item, system) pairs judged twice or more; {agreement.seconds:.2f} s"
        )

    def write_csv_file(self, run: RankingRun, target: str) -> None:
        if target == "-":
            write_csv(sys.stdout, run)
            return
        with Path(target).open("w", newline="", encoding="utf-8") as out:
            write_csv(out, run)
        self.stdout.write(f"CSV written to {target}")


def repetitions_text(run: RankingRun) -> str:
    if run.protocol == Protocol.WMT:
        return "no resampling"
    if run.protocol == Protocol.BRADLEY_TERRY:
        return f"{run.repetitions} bootstrap resamples, seed {run.seed}"
    return f"{run.repetitions} runs, seed {run.seed}"
