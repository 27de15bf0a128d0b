"""Making and checking API tokens (models.ApiToken)."""

from collections.abc import Iterable
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from annotation.models import Campaign

from .models import ApiToken, digest, token_expiry

# last_used_at is written at most this often per token: not one UPDATE per request.
LAST_USED_PRECISION = timedelta(minutes=1)


def create_token(
    user,
    name: str,
    campaigns: Iterable[Campaign] = (),
    change: bool = False,
    days: int | None = None,
) -> tuple[ApiToken, str]:
    """A new token and its secret, which is not stored and cannot be shown again; it ends in
    `days` (API_TOKEN_DAYS by default)."""
    token = ApiToken(
        user=user, name=name, level="change" if change else "view", expires_at=token_expiry(days)
    )
    secret = token.new_secret()
    with transaction.atomic():
        token.save()
        token.campaigns.set(campaigns)
    return token, secret


class TokenEnded(Exception):
    """A token that cannot be rotated: revoked or expired (make a new one instead)."""


def rotate_token(token: ApiToken, days: int | None = None) -> tuple[ApiToken, str]:
    """A new token in place of `token` (its user, name, level and campaigns), ending in
    `days`, and its secret; the old one is revoked in the same transaction, so exactly one
    of them works at any moment. TokenEnded if the old one no longer works."""
    with transaction.atomic():
        old = ApiToken.objects.live().select_for_update().filter(pk=token.pk).first()
        if old is None:
            raise TokenEnded(f"token {token.pk} is revoked or expired: make a new one")
        campaigns = list(old.campaigns.all())
        new, secret = create_token(
            old.user, old.name, campaigns, old.level == ApiToken.Level.CHANGE, days
        )
        ApiToken.objects.filter(pk=old.pk).update(revoked_at=timezone.now())
    token.refresh_from_db(fields=["revoked_at"])
    return new, secret


def token_for(secret: str) -> ApiToken | None:
    """The live token with this secret, its user loaded; None for any other."""
    if not secret or len(secret) > 200:
        return None
    token = ApiToken.objects.live().select_related("user").filter(secret_sha256=digest(secret))
    found = token.first()
    if found is None or not found.user.is_active:
        return None
    now = timezone.now()
    if found.last_used_at is None or now - found.last_used_at > LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=found.pk).update(last_used_at=now)
        found.last_used_at = now
    return found
