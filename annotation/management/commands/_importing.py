"""What the import commands share: finding the campaign and opening the file."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from django.core.management.base import CommandError
from django.db import transaction

from annotation.models import Campaign, CampaignCriterion
from nlgdata.datafiles import DataFileError


def get_campaign(slug: str, create: bool = False) -> Campaign:
    if create:
        campaign, made = Campaign.objects.get_or_create(slug=slug, defaults={"name": slug})
        if made:
            CampaignCriterion.objects.add_defaults(campaign)
        return campaign
    try:
        return Campaign.objects.get(slug=slug)
    except Campaign.DoesNotExist:
        raise CommandError(
            f"no campaign '{slug}'; create it in the admin, or pass --create-campaign"
        ) from None


@contextmanager
def open_file(path: str) -> Iterator[tuple[BinaryIO, str]]:
    """The file opened for reading as a stream (the importers never hold it whole), and
    its name for messages."""
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"{path}: no such file")
    try:
        stream = file.open("rb")
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}") from None
    with stream:
        yield stream, file.name


def run_import(command, work) -> None:
    """Run `work` (which may create the campaign or system first) in one transaction."""
    try:
        with transaction.atomic():
            summary = work()
    except DataFileError as error:
        raise CommandError(f"{error}\nNothing was imported.") from None
    command.stdout.write(command.style.SUCCESS(str(summary)))
