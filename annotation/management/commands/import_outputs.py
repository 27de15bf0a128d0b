from collections import Counter
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.datafiles.importers import import_outputs
from annotation.models import Campaign, System

from ._importing import get_campaign, open_file, run_import


class Command(BaseCommand):
    help = (
        "Import systems' outputs: the E2E output TSV/CSV (MR, output), matched to items by "
        "their MR, or JSON Lines ({item, text}). One system's file (campaign, system, file), "
        "or with --files several systems' files at once, each system named after its file."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("system", nargs="?", help="system name (not with --files)")
        parser.add_argument("file", nargs="?", help="its outputs (not with --files)")
        parser.add_argument(
            "--files",
            nargs="+",
            metavar="FILE",
            default=[],
            help="several systems' outputs, a file each, each system named by its file's name "
            "without the extension (outputs/tgen.tsv: tgen); all in one transaction",
        )
        parser.add_argument(
            "--create-system",
            action="store_true",
            help="create the system if the campaign does not have it",
        )
        parser.add_argument("--architecture", default="", help="with --create-system")

    def handle(self, campaign, system, file, files, create_system, architecture, **options):
        named_files = systems_and_files(system, file, files)

        def work():
            campaign_row = get_campaign(campaign)
            summaries = []
            for name, path in named_files:
                system_row = find_system(campaign_row, name, create_system, architecture)
                with open_file(path) as (data, file_name):
                    summaries.append(import_outputs(campaign_row, system_row, data, file_name))
            return "\n".join(str(summary) for summary in summaries)

        run_import(self, work)


def systems_and_files(system: str | None, file: str | None, files: list[str]):
    """(system name, path) pairs: the one given, or one per file of --files, named by its
    stem. Every file is checked to exist before anything is imported."""
    if files and (system or file):
        raise CommandError("give either a system and its file, or --files, not both")
    if files:
        pairs = [(Path(path).stem, path) for path in files]
        repeated = sorted(
            name for name, count in Counter(name for name, _ in pairs).items() if count > 1
        )
        if repeated:
            raise CommandError(f"--files names system '{repeated[0]}' twice")
    elif system and file:
        pairs = [(system, file)]
    else:
        raise CommandError("give a system and its file, or --files FILE [FILE ...]")
    for _, path in pairs:
        if not Path(path).is_file():
            raise CommandError(f"{path}: no such file")
    return pairs


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
