"""Making and checking API tokens (models.ApiToken)."""

from collections.abc import Iterable
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from annotation.models import Campaign

from .models import ApiToken, digest

# last_used_at is written at most this often per token: not one UPDATE per request.
LAST_USED_PRECISION = timedelta(minutes=1)


def create_token(
    user, name: str, campaigns: Iterable[Campaign] = (), change: bool = False
) -> tuple[ApiToken, str]:
    """A new token and its secret, which is not stored and cannot be shown again."""
    token = ApiToken(user=user, name=name, level="change" if change else "view")
    secret = token.new_secret()
    with transaction.atomic():
        token.save()
        token.campaigns.set(campaigns)
    return token, secret


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
