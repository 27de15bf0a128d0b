from django.core.management.base import BaseCommand

from annotation.datafiles.importers import import_items

from ._importing import get_campaign, open_file, run_import


class Command(BaseCommand):
    help = (
        "Import items into a campaign: the E2E dataset CSV (mr, ref; one row per reference) "
        "or JSON Lines ({id, kind, input, references})."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("file")
        parser.add_argument(
            "--create-campaign",
            action="store_true",
            help="create the campaign (both criteria) if it does not exist",
        )

    def handle(self, campaign, file, create_campaign, **options):
        with open_file(file) as (data, name):
            run_import(
                self, lambda: import_items(get_campaign(campaign, create_campaign), data, name)
            )
