"""API tokens: per organiser, scoped to campaigns, hashed at rest.

A token is a high-entropy secret shown once when it is made; the database keeps its SHA-256
only (a slow hash buys nothing for 256 random bits, and a lookup by digest is one indexed
query). A token reaches only the campaigns it names (none named: none reached), at the level
it was given (view or change), and only while its user still holds the matching permission
on campaigns (annotation.permissions.may): taking a permission away from a user disables
their tokens too. A token ends API_TOKEN_DAYS after it is made (expires_at) unless revoked
sooner; rotation (api/tokens.py) gives a new one in its place.
"""

import base64
import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from annotation.models import Annotator, Campaign

from .targets import WebhookRefused, check_url

# What a token looks like: a prefix that says what it is (so a leaked one is recognised by
# secret scanners and by people), then 256 random bits.
TOKEN_PREFIX = "nlgeval_"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_expiry(days: int | None = None):
    """When a token made now ends: in `days`, API_TOKEN_DAYS by default (and at most)."""
    if days is not None and not 1 <= days <= settings.API_TOKEN_DAYS:
        raise ValueError(f"a token lasts 1 to {settings.API_TOKEN_DAYS} days (API_TOKEN_DAYS)")
    return timezone.now() + timedelta(days=days or settings.API_TOKEN_DAYS)


class ApiTokenQuerySet(models.QuerySet):
    def live(self):
        """Tokens that work: neither revoked nor expired."""
        return self.filter(revoked_at__isnull=True, expires_at__gt=timezone.now())


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
    # Tokens made before expiry existed end API_TOKEN_DAYS after the migration that added it.
    expires_at = models.DateTimeField(default=token_expiry, editable=False)

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


# Webhooks ------------------------------------------------------------------------------------


class Event(models.TextChoices):
    RANKING_DONE = "ranking.done", "A ranking run finished"
    CRITERION_SETTLED = "criterion.settled", "A criterion closed: its clusters are stable"
    CAMPAIGN_COMPLETE = "campaign.complete", "The campaign was closed"
    ANNOTATOR_FAILED_QC = "annotator.failed_qc", "An annotator failed the attention checks"


def all_events() -> list[str]:
    return list(Event.values)


def new_webhook_secret() -> str:
    """A Standard Webhooks secret: whsec_ and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


class WebhookEndpoint(models.Model):
    """Where a campaign's events are sent: an http(s) URL that must resolve to public
    addresses (unless WEBHOOK_ALLOW_PRIVATE), checked when saved and before each delivery."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    url = models.URLField("URL", max_length=500)
    events = models.JSONField(default=all_events, help_text="The events sent to this URL.")
    secret = models.CharField(
        max_length=100,
        default=new_webhook_secret,
        help_text="Signs each delivery (Standard Webhooks: webhook-signature v1); the receiver"
        " checks it with this secret.",
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Events of rows changed before this were looked for by an earlier sweep.
    swept_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["campaign", "url"]
        verbose_name = "webhook endpoint"

    def __str__(self) -> str:
        return f"{self.campaign.slug} -> {self.url}"

    def clean(self) -> None:
        events = self.events if isinstance(self.events, list) else None
        if events is None or not events or set(events) - set(Event.values):
            raise ValidationError({"events": f"a list of events among {', '.join(Event.values)}"})
        try:
            check_url(self.url)
        except WebhookRefused as error:
            raise ValidationError({"url": str(error)}) from None
        except OSError as error:
            raise ValidationError({"url": str(error)}) from None


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.CharField(max_length=30, choices=Event.choices)
    # What the event is about, so that a sweep that sees it again adds nothing.
    event_key = models.CharField(max_length=200)
    # The message id (webhook-id): the same on every attempt, so a receiver can tell repeats.
    message_id = models.CharField(max_length=40, unique=True)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    response_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.TextField(blank=True, help_text="the answer's first characters")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event_key"], name="webhook_event_once")
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.event} to {self.endpoint_id} ({self.status})"


# Prolific's events -----------------------------------------------------------------------------


class ProlificHook(models.Model):
    """A campaign's receipt of Prolific's webhook events (submission.status.change): the
    workspace's hook secret, which signs them. Prolific's subscription's target URL is the
    campaign's /api/v1/prolific/<slug>/events/."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="+")
    secret = models.CharField(
        max_length=200,
        help_text="The secret of the Prolific workspace's hooks (POST /api/v1/hooks/secrets/"
        " on Prolific): it signs every event, and events it did not sign are refused.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "Prolific hook"

    def __str__(self) -> str:
        return f"Prolific events of {self.campaign.slug}"


class ProlificEvent(models.Model):
    """An event received, and what was done: a repeat of its X-Event-ID does nothing."""

    hook = models.ForeignKey(ProlificHook, on_delete=models.CASCADE, related_name="events")
    event_id = models.CharField(max_length=100)
    event_type = models.CharField(max_length=60)
    participant_id = models.CharField(max_length=200, blank=True)
    submission_id = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=40, blank=True)
    outcome = models.CharField(max_length=300)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at"]
        constraints = [
            models.UniqueConstraint(fields=["hook", "event_id"], name="prolific_event_once")
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.status} ({self.participant_id})"


# Bonuses ---------------------------------------------------------------------------------------


class BonusRule(models.Model):
    """A campaign's bonus, from the platform's verdicts: an amount per counted HIT and one
    for passing the checks, for Prolific annotators whose work counts and passes them."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="+")
    per_counted_hit = models.DecimalField(
        max_digits=8, decimal_places=2, default=0, help_text="per HIT that rankings count"
    )
    for_passing_checks = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=0,
        help_text="once, to an annotator who passes the attention and comprehension checks",
    )

    class Meta:
        verbose_name = "bonus rule"

    def __str__(self) -> str:
        return f"bonus of {self.campaign.slug}"


class BonusBatch(models.Model):
    """One call of Prolific's bulk bonus: its state is written before and after each call,
    so a retry knows whether a batch was set up on Prolific, and whether it may have been
    paid already (then only that batch is paid again, never a new one)."""

    class State(models.TextChoices):
        SETTING_UP = "setting_up", "Setting up on Prolific"
        SET_UP = "set_up", "Set up on Prolific, not paid"
        PAYING = "paying", "Paying (sent; answer not yet recorded)"
        PAID = "paid", "Paid"
        FAILED = "failed", "Failed: Prolific refused"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=12, choices=State.choices, default=State.SETTING_UP)
    prolific_id = models.CharField(max_length=100, blank=True)
    total = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "bonus batches"

    def __str__(self) -> str:
        return f"bonus batch {self.pk} of {self.campaign.slug} ({self.state})"


def keep_sent_bonuses(collector, field, sub_objs, using):
    """on_delete of a bonus's annotator and campaign: the bonuses not yet sent (proposed,
    approved) go with them; a bonus taken into a batch for Prolific, being paid or paid, is
    the record of money sent to a person, and refuses the deletion (ProtectedError, which the
    admin's delete page lists)."""
    unsent = (BonusPayment.State.PROPOSED, BonusPayment.State.APPROVED)
    sent = sub_objs.exclude(state__in=unsent)
    if sent:
        models.PROTECT(collector, field, sent, using)
    models.CASCADE(collector, field, sub_objs.filter(state__in=unsent), using)


class BonusPayment(models.Model):
    """The ledger: one row per annotator and campaign, ever. A bonus proposed, approved by
    the organiser, then taken into one batch: an annotator in a batch is never in another."""

    class State(models.TextChoices):
        PROPOSED = "proposed", "Proposed"
        APPROVED = "approved", "Approved, to pay"
        IN_BATCH = "in_batch", "In a batch being paid"
        PAID = "paid", "Paid"

    campaign = models.ForeignKey(Campaign, on_delete=keep_sent_bonuses, related_name="+")
    annotator = models.ForeignKey(Annotator, on_delete=keep_sent_bonuses, related_name="+")
    counted_hits = models.PositiveIntegerField(default=0)
    passed_checks = models.BooleanField(default=False)
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PROPOSED)
    batch = models.ForeignKey(
        BonusBatch, null=True, blank=True, on_delete=models.PROTECT, related_name="payments"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["campaign", "annotator"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="bonus_once"),
            models.CheckConstraint(condition=models.Q(amount__gt=0), name="bonus_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.amount} to {self.annotator} ({self.state})"
