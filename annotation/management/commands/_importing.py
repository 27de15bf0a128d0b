"""What the import commands share: finding the campaign and reading the file."""

from pathlib import Path

from django.core.management.base import CommandError
from django.db import transaction

from annotation.datafiles import DataFileError
from annotation.models import Campaign, CampaignCriterion, Criterion


def get_campaign(slug: str, create: bool = False) -> Campaign:
    if create:
        campaign, made = Campaign.objects.get_or_create(slug=slug, defaults={"name": slug})
        if made:
            for criterion in Criterion.values:
                CampaignCriterion.objects.create(campaign=campaign, criterion=criterion)
        return campaign
    try:
        return Campaign.objects.get(slug=slug)
    except Campaign.DoesNotExist:
        raise CommandError(
            f"no campaign '{slug}'; create it in the admin, or pass --create-campaign"
        ) from None


def read_file(path: str) -> tuple[bytes, str]:
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"{path}: no such file")
    return file.read_bytes(), file.name


def run_import(command, work) -> None:
    """Run `work` (which may create the campaign or system first) in one transaction."""
    try:
        with transaction.atomic():
            summary = work()
    except DataFileError as error:
        raise CommandError(f"{error}\nNothing was imported.") from None
    command.stdout.write(command.style.SUCCESS(str(summary)))
