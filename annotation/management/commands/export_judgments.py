from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.datafiles.exporters import FORMATS, ExportError, export
from annotation.models import Campaign, CampaignCriterion


class Command(BaseCommand):
    help = (
        "Write a campaign's judgments, one row per judgment (csv, jsonl), or as the E2E "
        "CrowdFlower CSV that import_ratings reads (e2e: the judgments rankings use, one "
        "criterion), or in a judgment form's layout that import_ratings --form reads (da,"
        " pairwise: the judgments rankings use). Annotators appear as numbers, never as their"
        " crowd platform's ids."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("--criterion", help="its name (default: every criterion)")
        parser.add_argument("--format", dest="file_format", choices=list(FORMATS), default="csv")
        parser.add_argument("--out", help="file to write (standard output if not given)")

    def handle(self, campaign, criterion, file_format, out, **options):
        found = Campaign.objects.filter(slug=campaign).first()
        if found is None:
            raise CommandError(f"no campaign '{campaign}'")
        chosen = None
        if criterion:
            try:
                chosen = found.criteria.named(criterion)
            except CampaignCriterion.DoesNotExist as error:
                raise CommandError(f"campaign '{campaign}': {error}") from None
        try:
            chunks = export(found, file_format, chosen)
        except ExportError as error:
            raise CommandError(str(error)) from None
        if out is None:
            for chunk in chunks:
                self.stdout.write(chunk, ending="")
            return
        with Path(out).open("w", newline="", encoding="utf-8") as file:
            file.writelines(chunks)
        self.stdout.write(f"{file_format} written to {out}")
