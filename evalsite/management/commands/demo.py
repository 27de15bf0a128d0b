from django.core.management.base import BaseCommand
from django.db import transaction

from annotation.demo import DEMO_SLUG, build_demo_campaign
from annotation.models import Campaign
from generation.demo import add_hosted_template_system


class Command(BaseCommand):
    help = (
        "Build the demo campaign (slug 'demo') from the sample data the project ships, with "
        "a hosted template system: the project assembles what annotation and generation "
        "each provide."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset",
            action="store_true",
            help="delete the demo campaign and everything in it, then rebuild",
        )

    def handle(self, reset, **options):
        existing = Campaign.objects.filter(slug=DEMO_SLUG)
        if existing.exists() and not reset:
            self.stdout.write("The demo campaign exists already (--reset rebuilds it).")
            return
        with transaction.atomic():
            existing.delete()
            campaign = build_demo_campaign()
            add_hosted_template_system(campaign)
        self.stdout.write(
            self.style.SUCCESS(
                f"Built '{campaign.slug}': {campaign.items.count()} items, "
                f"{campaign.systems.count()} systems, both criteria open."
            )
        )
