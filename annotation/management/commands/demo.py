from django.core.management.base import BaseCommand

from annotation.demo import DEMO_SLUG, build_demo_campaign
from annotation.models import Campaign


class Command(BaseCommand):
    help = "Build the demo campaign (slug 'demo') from the sample data the project ships."

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
        existing.delete()
        campaign = build_demo_campaign()
        self.stdout.write(
            self.style.SUCCESS(
                f"Built '{campaign.slug}': {campaign.items.count()} items, "
                f"{campaign.systems.count()} systems, both criteria open."
            )
        )
