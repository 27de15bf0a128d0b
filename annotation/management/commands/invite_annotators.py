from django.conf import settings
from django.core.management.base import BaseCommand

from annotation.identity import invite, invite_path

from ._importing import get_campaign


class Command(BaseCommand):
    help = "Invite named annotators to a campaign and print their private links."

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("names", nargs="+", help="one name per annotator")

    def handle(self, campaign, names, **options):
        campaign = get_campaign(campaign)
        root = settings.SITE_ROOT.rstrip("/")
        for name in names:
            annotator = invite(campaign, name)
            for criterion in campaign.criteria.all():
                link = root + invite_path(annotator, criterion.criterion)
                self.stdout.write(f"{name}\t{criterion.criterion}\t{link}")
