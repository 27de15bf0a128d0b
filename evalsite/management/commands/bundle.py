from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from evalsite.datasheet import build_datasheet
from ranking.bundle.writer import RUNS, write_bundle


class Command(BaseCommand):
    help = (
        "Write everything needed to reproduce the campaign's rankings into one zip: items, "
        "systems, outputs, judgments with flags and exclusions (annotators pseudonymous), "
        "settings, the newest finished runs with their seeds and results, the datasheet, "
        "and SHA-256 checksums. `manage.py rank --bundle FILE` ranks again from it alone."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", metavar="campaign", help="campaign slug")
        parser.add_argument("out", help="the zip file to write (its folder made if missing)")

    def handle(self, slug, out, **options):
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            raise CommandError(f"no campaign '{slug}'")
        target = Path(out)
        if target.is_dir():
            raise CommandError(f"{out}: a folder; give the zip file's name")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise CommandError(f"{target.parent}: a file, not a folder") from None
        manifest = write_bundle(campaign, target, datasheet_of=build_datasheet)
        for name, member in manifest["members"].items():
            rows = "" if member["rows"] is None else f" ({member['rows']} rows)"
            self.stdout.write(f"  {name}{rows}")
        self.stdout.write(f"Written {target}")
        self.warn_about_runs(manifest)

    def warn_about_runs(self, manifest: dict) -> None:
        runs = manifest["runs"]
        if not runs:
            self.stdout.write(
                self.style.WARNING(f"{RUNS} is empty: no finished ranking run to reproduce")
            )
        for run in runs:
            if not run["covers_bundle_judgments"]:
                self.stdout.write(
                    self.style.WARNING(
                        f"run {run['id']} ({run['criterion']}, {run['protocol']}) predates "
                        "the latest judgments: ranking the bundle again will differ from it; "
                        "rank the campaign again (manage.py rank), then write the bundle"
                    )
                )
