import sys
from collections.abc import Iterable
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign, Criterion
from ranking.export import CsvRow, ranked_rows, stored_rows, write_rows
from ranking.models import DEFAULT_REPETITIONS, Protocol, RankingRun
from ranking.rerank import BundleError, Reranked, rerank_bundle
from ranking.service import execute_run


class Command(BaseCommand):
    help = (
        "Compute TrueSkill clusters for a campaign and criterion here (no worker), store them "
        "for the results page and print the table; or, with --bundle, rank again from a "
        "bundle alone (manage.py bundle) and check the result against the run it stores."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", metavar="campaign", nargs="?", help="campaign slug")
        parser.add_argument(
            "--bundle",
            help="rank again the runs stored in this bundle, from its judgments, no database",
        )
        parser.add_argument(
            "--criterion",
            dest="criterion_name",
            choices=Criterion.values,
            help=f"default: {Criterion.QUALITY}; with --bundle, every criterion it has",
        )
        parser.add_argument(
            "--repetitions",
            "--runs",
            type=int,
            help=f"how often the TrueSkill run is repeated (R); default {DEFAULT_REPETITIONS}",
        )
        parser.add_argument("--seed", type=int, help="default 0")
        parser.add_argument(
            "--protocol",
            choices=Protocol.values,
            help=f"default: {Protocol.E2E}; with --bundle, every protocol it has",
        )
        parser.add_argument("--csv", help="also write the CSV here ('-' for standard output)")

    def handle(self, slug, bundle, criterion_name, repetitions, seed, protocol, csv, **options):
        if bundle:
            if slug or repetitions is not None or seed is not None:
                raise CommandError(
                    "with --bundle, the campaign, repetitions and seed are the bundle's"
                )
            self.rank_bundle(Path(bundle), criterion_name, protocol, csv)
            return
        if not slug:
            raise CommandError("give a campaign, or --bundle FILE")
        run = self.new_run(
            slug,
            criterion_name or Criterion.QUALITY,
            protocol or Protocol.E2E,
            DEFAULT_REPETITIONS if repetitions is None else repetitions,
            seed or 0,
        )
        execute_run(run)
        run.refresh_from_db()
        if run.status != RankingRun.Status.DONE:
            raise CommandError(f"ranking failed: {run.error}")
        self.stdout.write(
            f"{run.get_protocol_display()}; {run.repetitions} runs, seed {run.seed}; "
            f"{run.judgments} judgments, {run.hits} HITs, {run.comparisons} comparisons; "
            f"{run.compute_seconds:.2f} s"
        )
        self.print_table(stored_rows(run))
        if csv:
            self.write_csv_file(list(stored_rows(run)), csv)

    def new_run(self, slug, criterion_name, protocol, repetitions, seed) -> RankingRun:
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
        return run

    def rank_bundle(self, path: Path, criterion_name, protocol, csv) -> None:
        try:
            reranked = rerank_bundle(path, criterion_name, protocol)
        except BundleError as error:
            raise CommandError(f"{path}: {error}") from None
        if csv and len(reranked) != 1:
            raise CommandError(
                f"--csv takes one run and the bundle has {len(reranked)}: "
                "choose one with --criterion and --protocol"
            )
        for one in reranked:
            self.report(path, one)
        if csv:
            self.write_csv_file(list(ranked_rows(reranked[0].rows)), csv)
        different = [one for one in reranked if one.differences]
        if different:
            raise CommandError(
                "not identical to the stored run: "
                + "; ".join(
                    f"run {one.run['id']}: {', '.join(one.differences)}" for one in different
                )
            )

    def report(self, path: Path, one: Reranked) -> None:
        run, data = one.run, one.data
        self.stdout.write(
            f"{run['criterion']}: {run.get('protocol_label', run['protocol'])}; "
            f"{run['repetitions']} runs, seed {run['seed']}; {data.judgments} judgments, "
            f"{data.hits} HITs, {len(data.comparisons)} comparisons; ranked again from {path}"
        )
        self.print_table(ranked_rows(one.rows))
        if not one.differences:
            self.stdout.write(
                f"Identical to the stored run {run['id']}: mean mu, rank ranges and clusters "
                f"of {len(one.rows)} systems."
            )

    def print_table(self, rows: Iterable[CsvRow]) -> None:
        self.stdout.write(f"{'cluster':>7} {'mu':>7} {'range':>7}  system")
        previous = None
        for cluster, system, mu, _, rank_lo, rank_hi, _ in rows:
            if previous is not None and cluster != previous:
                self.stdout.write("-" * 40)
            shown = str(cluster) if cluster != previous else ""
            span = f"{rank_lo}-{rank_hi}"
            self.stdout.write(f"{shown:>7} {mu:7.3f} {span:>7}  {system}")
            previous = cluster

    def write_csv_file(self, rows: list[CsvRow], target: str) -> None:
        if target == "-":
            write_rows(sys.stdout, rows)
            return
        with Path(target).open("w", newline="", encoding="utf-8") as out:
            write_rows(out, rows)
        self.stdout.write(f"CSV written to {target}")
