from django.core.management.base import BaseCommand

from annotation.datafiles.ratings_import import SCORE_COLUMNS, import_ratings

from ._importing import get_campaign, open_file, run_import


class Command(BaseCommand):
    help = (
        "Import crowd ratings in the E2E CrowdFlower format (mr, sys1..k, ref1..k, quality1..k "
        "or natur1..k, check1..k, _worker_id, _started_at, _created_at)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("file")
        parser.add_argument(
            "--criterion",
            choices=list(SCORE_COLUMNS),
            help="which scores to read when the file has both",
        )
        parser.add_argument("--create-campaign", action="store_true")

    def handle(self, campaign, file, criterion, create_campaign, **options):
        with open_file(file) as (data, name):
            run_import(
                self,
                lambda: import_ratings(
                    get_campaign(campaign, create_campaign), data, name, criterion=criterion
                ),
            )
