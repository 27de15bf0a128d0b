from django.core.management.base import BaseCommand, CommandError

from api.models import ApiToken
from api.tokens import TokenEnded, rotate_token


class Command(BaseCommand):
    help = (
        "Replace API token TOKEN_ID (its number in the admin's list) by a new one with the same"
        " user, name, level and campaigns, print the new secret once, and revoke the old one."
    )

    def add_arguments(self, parser):
        parser.add_argument("token_id", type=int)
        parser.add_argument("--days", type=int, help="how long it lasts (API_TOKEN_DAYS)")

    def handle(self, token_id, days, **options):
        token = ApiToken.objects.filter(pk=token_id).first()
        if token is None:
            raise CommandError(f"no API token {token_id}")
        try:
            new, secret = rotate_token(token, days)
        except (TokenEnded, ValueError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(secret)
        self.stderr.write(
            f"token {new.pk} ends {new.expires_at:%Y-%m-%d %H:%M} UTC; token {token_id} is revoked"
        )
