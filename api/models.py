"""API tokens: per organiser, scoped to campaigns, hashed at rest.

A token is a high-entropy secret shown once when it is made; the database keeps its SHA-256
only (a slow hash buys nothing for 256 random bits, and a lookup by digest is one indexed
query). A token reaches only the campaigns it names (none named: none reached), at the level
it was given (view or change), and only while its user still holds the matching permission
on campaigns (annotation.permissions.may): taking a permission away from a user disables
their tokens too.
"""

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotation.models import Campaign

# What a token looks like: a prefix that says what it is (so a leaked one is recognised by
# secret scanners and by people), then 256 random bits.
TOKEN_PREFIX = "nlgeval_"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet):
    def live(self):
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    class Level(models.TextChoices):
        VIEW = "view", "View"
        CHANGE = "change", "View and change"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. a pipeline.")
    secret_sha256 = models.CharField(max_length=64, unique=True, editable=False)
    # The first characters of the token, to tell tokens apart in lists (not enough to use).
    hint = models.CharField(max_length=16, editable=False)
    campaigns = models.ManyToManyField(
        Campaign,
        blank=True,
        related_name="+",
        help_text="The campaigns the token reaches; none chosen: it reaches none.",
    )
    level = models.CharField(max_length=10, choices=Level.choices, default=Level.VIEW)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.hint}…)"

    def new_secret(self) -> str:
        """Give the token a fresh secret and return it: the only time it is seen whole."""
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        self.secret_sha256 = digest(secret)
        self.hint = secret[: len(TOKEN_PREFIX) + 4]
        return secret

    def revoke(self) -> None:
        ApiToken.objects.filter(pk=self.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        self.refresh_from_db(fields=["revoked_at"])
