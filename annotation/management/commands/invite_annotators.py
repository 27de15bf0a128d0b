from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.identity import invite, invite_path

from ._importing import get_campaign


class Command(BaseCommand):
    help = "Invite named annotators to a campaign and print their private links."

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="campaign slug")
        parser.add_argument("names", nargs="+", help="one name per annotator")
        parser.add_argument(
            "--site-url",
            default=settings.SITE_URL,
            help="the site's public address, e.g. https://eval.example.org (default: the"
            " SITE_URL setting)",
        )

    def handle(self, campaign, names, site_url, **options):
        # Links go out by mail or chat: without the site's address they would not open.
        if not site_url:
            raise CommandError(
                "No site address for the links: set SITE_URL (e.g. https://eval.example.org)"
                " or pass --site-url."
            )
        campaign = get_campaign(campaign)
        root = site_url.rstrip("/")
        for name in names:
            annotator = invite(campaign, name)
            for criterion in campaign.criteria.all():
                link = root + invite_path(annotator, criterion.name)
                self.stdout.write(f"{name}\t{criterion.name}\t{link}")
