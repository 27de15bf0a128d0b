from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.datafiles.importers import import_outputs
from annotation.models import Campaign, System

from ._importing import get_campaign, open_file, run_import


class Command(BaseCommand):
    help = (
        "Import one system's outputs: the E2E output TSV/CSV (MR, output), matched to items by "
        "their MR, or JSON Lines ({item, text})."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("system", help="system name")
        parser.add_argument("file")
        parser.add_argument(
            "--create-system",
            action="store_true",
            help="create the system if the campaign does not have it",
        )
        parser.add_argument("--architecture", default="", help="with --create-system")

    def handle(self, campaign, system, file, create_system, architecture, **options):
        with open_file(file) as (data, name):

            def work():
                campaign_row = get_campaign(campaign)
                system_row = find_system(campaign_row, system, create_system, architecture)
                return import_outputs(campaign_row, system_row, data, name)

            run_import(self, work)


def find_system(campaign: Campaign, name: str, create: bool, architecture: str) -> System:
    system = campaign.systems.filter(name=name).first()
    if system is not None:
        return system
    if not create:
        raise CommandError(
            f"unknown system '{name}' in campaign '{campaign.slug}'; create it in the "
            "admin or pass --create-system"
        )
    system = System(campaign=campaign, name=name, architecture=architecture)
    try:
        system.full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        raise CommandError(f"system '{name}': {'; '.join(error.messages)}") from None
    system.save()
    return system
