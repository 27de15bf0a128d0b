import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.published import DATASETS, load_published
from nlgdata.datafiles import DataFileError


class Command(BaseCommand):
    help = (
        "Load a published dataset into a campaign, ready to open: its items with references "
        "and source ids, the systems' outputs (and the human reference where the dataset has "
        "one), both criteria with questions for the dataset. PATH is the dataset's folder as "
        "the project's shared data lays it out. Idempotent: what an earlier run loaded is "
        "left alone; all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("dataset", choices=list(DATASETS))
        parser.add_argument("path", help="the dataset's folder")
        parser.add_argument(
            "--campaign", help="campaign slug (default: the dataset's name); made if missing"
        )

    def handle(self, dataset, path, campaign, **options):
        folder = Path(path)
        if not folder.is_dir():
            raise CommandError(f"{path}: no such folder")
        started = time.perf_counter()
        try:
            summary = load_published(dataset, folder, campaign, self.progress)
        except DataFileError as error:
            raise CommandError(f"{error}\nNothing was loaded.") from None
        self.stdout.write(self.style.SUCCESS(str(summary)))
        self.stdout.write(f"{time.perf_counter() - started:.1f} s")

    def progress(self, message: str) -> None:
        self.stdout.write(f"  {message}")
