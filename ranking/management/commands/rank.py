import sys
from collections.abc import Iterable
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.models import QUALITY, Campaign, CampaignCriterion
from ranking.agreement.models import RunAgreement
from ranking.bundle.rerank import BundleError, Reranked, rerank_bundle
from ranking.export import Named, stored_rows, write_rows
from ranking.models import DEFAULT_REPETITIONS, RankingRun
from ranking.protocols import DEFAULT, NAMES, PROTOCOLS, protocol_named
from ranking.service import execute_run


class Command(BaseCommand):
    help = (
        "Compute a ranking (TrueSkill clusters, Bradley-Terry or WMT's view) for a campaign and "
        "criterion here (no worker), store it for the results page and print the table; or, "
        "with --bundle, rank again from a bundle alone (manage.py bundle) and check the "
        "result against the run it stores."
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
            metavar="NAME",
            help=f"the criterion's name (default: {QUALITY}); with --bundle, every criterion it"
            " has",
        )
        parser.add_argument(
            "--repetitions",
            "--runs",
            type=int,
            help="how often the TrueSkill run is repeated, or Bradley-Terry resampled (R); "
            f"default {DEFAULT_REPETITIONS}",
        )
        parser.add_argument("--seed", type=int, help="default 0")
        parser.add_argument(
            "--protocol",
            choices=NAMES,
            help=f"default: {DEFAULT}; with --bundle, every protocol it has",
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
            criterion_name or QUALITY,
            protocol or DEFAULT,
            DEFAULT_REPETITIONS if repetitions is None else repetitions,
            seed or 0,
        )
        execute_run(run)
        run.refresh_from_db()
        if run.status != RankingRun.Status.DONE:
            raise CommandError(f"ranking failed: {run.error}")
        if run.found_nothing_to_rank:
            raise CommandError(run.note)  # no table to print or write
        self.stdout.write(
            f"{run.protocol_label}; "
            f"{repetitions_text(run.protocol, run.repetitions, run.seed)}; "
            f"{run.judgments} judgments, {run.hits} HITs, {run.comparisons} comparisons; "
            f"{run.compute_seconds:.2f} s"
        )
        self.print_table(run.protocol, stored_rows(run))
        self.print_agreement(run)
        if csv:
            self.write_csv_file(run.protocol, list(stored_rows(run)), csv)

    def new_run(self, slug, criterion_name, protocol, repetitions, seed) -> RankingRun:
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            raise CommandError(f"no campaign '{slug}'")
        try:
            criterion = campaign.criteria.named(criterion_name)
        except CampaignCriterion.DoesNotExist as error:
            raise CommandError(f"campaign '{slug}': {error}") from None
        run = RankingRun(
            campaign=campaign,
            criterion=criterion,
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
            self.write_csv_file(reranked[0].run["protocol"], named(reranked[0]), csv)
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
            f"{repetitions_text(run['protocol'], run['repetitions'], run['seed'])}; "
            f"{data.judgments} judgments, {data.hits} HITs, {len(data.comparisons)} "
            f"comparisons; ranked again from {path}"
        )
        self.print_table(run["protocol"], named(one))
        if not one.differences:
            self.stdout.write(
                f"Identical to the stored run {run['id']}: every system's score, rank range "
                f"and cluster ({len(one.rows)} systems)."
            )

    def print_table(self, protocol: str, rows: Iterable[Named]) -> None:
        group, score = protocol_named(protocol).table_headers
        self.stdout.write(f"{group:>7} {score:>7} {'range':>7}  system")
        previous = None
        for name, row in rows:
            if previous is not None and row.cluster != previous:
                self.stdout.write("-" * 40)
            cluster = str(row.cluster) if row.cluster != previous else ""
            span = f"{row.rank_lo}-{row.rank_hi}"
            self.stdout.write(f"{cluster:>7} {row.mu:7.3f} {span:>7}  {name}")
            previous = row.cluster

    def print_agreement(self, run: RankingRun) -> None:
        agreement = RunAgreement.objects.filter(run=run).first()
        if agreement is None or agreement.alpha is None:
            return
        self.stdout.write(
            f"Krippendorff's alpha {agreement.alpha:.3f} (95% interval {agreement.alpha_low:.3f} "
            f"to {agreement.alpha_high:.3f}, {agreement.rounds} rounds) on {agreement.units} "
            f"(item, system) pairs judged twice or more; {agreement.seconds:.2f} s"
        )

    def write_csv_file(self, protocol: str, rows: list[Named], target: str) -> None:
        if target == "-":
            write_rows(sys.stdout, protocol, rows)
            return
        with Path(target).open("w", newline="", encoding="utf-8") as out:
            write_rows(out, protocol, rows)
        self.stdout.write(f"CSV written to {target}")


def named(one: Reranked) -> list[Named]:
    return [(row.system, row) for row in one.rows]


def repetitions_text(protocol: str, repetitions: int, seed: int) -> str:
    known = PROTOCOLS.get(protocol)
    return (
        known.repetitions_text(repetitions, seed) if known else f"{repetitions} runs, seed {seed}"
    )
