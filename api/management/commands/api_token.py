from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from api.tokens import create_token


class Command(BaseCommand):
    help = (
        "Make an API token for USERNAME and print it once (the platform keeps its hash only)."
        " It reaches the campaigns named with --campaign, none otherwise, and ends after"
        " --days (API_TOKEN_DAYS by default, and at most)."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--campaign", action="append", default=[], metavar="SLUG", help="repeatable"
        )
        parser.add_argument("--change", action="store_true", help="may change, not only view")
        parser.add_argument("--name", default="command line", help="what the token is for")
        parser.add_argument("--days", type=int, help="how long it lasts (API_TOKEN_DAYS)")

    def handle(self, username, campaign, change, name, days, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}")
        campaigns = list(Campaign.objects.filter(slug__in=campaign))
        missing = sorted(set(campaign) - {c.slug for c in campaigns})
        if missing:
            raise CommandError(f"no campaign {', '.join(missing)}")
        try:
            token, secret = create_token(user, name[:100], campaigns, change, days)
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(secret)
        self.stderr.write(f"token {token.pk} ends {token.expires_at:%Y-%m-%d %H:%M} UTC")
