from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from evalsite.datasheet import datasheet_files


class Command(BaseCommand):
    help = (
        "Write the campaign's HEDS 3.0 datasheet, filled from the platform, as JSON and "
        "Markdown (<campaign>-datasheet.json and .md); what only a person can answer is "
        "listed as to be filled by hand."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", metavar="campaign", help="campaign slug")
        parser.add_argument(
            "--out", default=".", help="folder to write into, made if missing (default: here)"
        )

    def handle(self, slug, out, **options):
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            raise CommandError(f"no campaign '{slug}'")
        folder = Path(out)
        # Made if missing, as the README's `--out reports/` on a fresh clone needs.
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise CommandError(f"{out}: a file, not a folder") from None
        for name, text in datasheet_files(campaign).items():
            (folder / name).write_text(text, encoding="utf-8")
            self.stdout.write(f"Written {folder / name}")
