"""Outbound webhooks: which events a campaign's endpoints are due, and their deliveries.

Events are found, not emitted. annotation and ranking know nothing of the API (the layers
forbid it), and each event is already a row they write: a RankingRun done, an annotator's
failed_attention_at, a criterion closed as stable, a campaign closed. The sweep (api.sweep,
Celery beat) reads what changed since it last looked, per endpoint, and records a delivery
per event; the (endpoint, event key) constraint makes a second look add nothing, so the
look-back may overlap. Like the rankings' sweep, the database says what is due: a broker
outage delays deliveries, never loses them.

A delivery is signed as Standard Webhooks specifies: webhook-id (the same on every attempt),
webhook-timestamp (seconds; the receiver refuses old ones, against replay) and
webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>" under the endpoint's secret.
A worker of the "outbound" queue sends it (never one that rankings need: a receiver that
answers slowly holds only that queue's workers, and each delivery for at most
WEBHOOK_TIMEOUT_SECONDS), records the answer, and on a failure waits WEBHOOK_RETRY_SECONDS,
twice as long after each further failure, until WEBHOOK_MAX_ATTEMPTS. An endpoint switched
off gets nothing more: its pending deliveries are dropped (failed, saying why) by the next
sweep, and by the worker if one reaches it first.
"""

import base64
import hashlib
import hmac
import json
import logging
import secrets
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

import outbound
from annotation.models import Annotator, Campaign
from ranking.models import RankingRun

from .models import Event, WebhookDelivery, WebhookEndpoint
from .targets import WebhookRefused, post

log = logging.getLogger(__name__)

# How far back each sweep looks again: a transaction that committed late, with a time
# stamped before the previous sweep's, is still found.
OVERLAP = timedelta(minutes=10)
# A delivery handed to the broker is not handed again for this long (its message may be
# lost, or its worker killed: then it is sent again).
LEASE = timedelta(minutes=2)
MAX_EVENTS_PER_SWEEP = 500
DROPPED = "dropped: the endpoint was switched off"
DELIVER_TASK = "api.deliver_webhook"


# Events ------------------------------------------------------------------------------------


def record_due_events(now: datetime | None = None) -> int:
    """Deliveries for the events of every active endpoint since it was last swept."""
    now = now or timezone.now()
    created = 0
    for endpoint in WebhookEndpoint.objects.filter(is_active=True).select_related("campaign"):
        since = (endpoint.swept_until or endpoint.created_at) - OVERLAP
        events = [e for e in campaign_events(endpoint.campaign, since) if e[0] in endpoint.events]
        known = endpoint.deliveries.filter(event_key__in=[key for _, key, _ in events])
        seen = set(known.values_list("event_key", flat=True))
        new = [delivery(endpoint, *event, now) for event in events if event[1] not in seen]
        with transaction.atomic():
            # A sweep running beside this one may have made some: the constraint keeps one.
            WebhookDelivery.objects.bulk_create(new, ignore_conflicts=True)
            WebhookEndpoint.objects.filter(pk=endpoint.pk).update(swept_until=now)
        created += len(new)
    return created


def delivery(endpoint, event: str, key: str, data: dict, now: datetime) -> WebhookDelivery:
    payload = {"type": event, "timestamp": now.isoformat(), "data": data}
    return WebhookDelivery(
        endpoint=endpoint,
        event=event,
        event_key=key[:200],
        message_id=f"msg_{secrets.token_hex(12)}",
        payload=payload,
        next_attempt_at=now,
    )


def campaign_events(campaign: Campaign, since: datetime) -> list[tuple[str, str, dict]]:
    """(event, key, data) for what happened in the campaign since `since`, as far as the
    rows tell; a few queries whatever the campaign's size."""
    about = {"campaign": campaign.slug}
    found: list[tuple[str, str, dict]] = []
    runs = RankingRun.objects.filter(campaign=campaign, finished_at__gte=since).finished()
    runs = runs.select_related("criterion")
    for run in runs.order_by("finished_at")[:MAX_EVENTS_PER_SWEEP]:
        found.append((Event.RANKING_DONE, f"run:{run.pk}", {**about, **ranking_data(run)}))
    failed = Annotator.objects.filter(campaign=campaign, failed_attention_at__gte=since)
    for annotator in failed.order_by("failed_attention_at")[:MAX_EVENTS_PER_SWEEP]:
        when = annotator.failed_attention_at or since  # not null: filtered on it
        data = {**about, "annotator": annotator.pk, "failed_at": when.isoformat()}
        data["attention_p"] = annotator.attention_p
        found.append((Event.ANNOTATOR_FAILED_QC, f"annotator:{annotator.pk}:{when}", data))
    settled = campaign.criteria.filter(is_open=False, closed_as_stable_since__isnull=False)
    for criterion in settled:
        since_hits = criterion.closed_as_stable_since
        data = {**about, "criterion": criterion.name, "stable_since_hits": since_hits}
        key = f"criterion:{criterion.pk}:{since_hits}"
        found.append((Event.CRITERION_SETTLED, key, data))
    if campaign.status == Campaign.Status.CLOSED:
        found.append((Event.CAMPAIGN_COMPLETE, f"campaign:{campaign.pk}", about))
    return found


RANKING_COLUMNS = ("system", "position", "cluster", "mu", "rank_lo", "rank_hi")


def ranking_data(run: RankingRun) -> dict[str, Any]:
    rows = run.results.order_by("position").values_list("system__name", *RANKING_COLUMNS[1:])
    return {
        "criterion": run.criterion.name,
        "protocol": run.protocol,
        "run": run.pk,
        "judgments_version": run.judgments_version,
        "systems": [
            dict(
                zip(("system", "position", "cluster", "mu", "rank_lo", "rank_hi"), row, strict=True)
            )
            for row in rows
        ],
    }


# Sending -----------------------------------------------------------------------------------


def drop_switched_off(deliveries: QuerySet[WebhookDelivery] | None = None) -> int:
    """Pending deliveries (of all, or of these) whose endpoint is switched off: failed,
    never sent again."""
    pending = (deliveries if deliveries is not None else WebhookDelivery.objects.all()).filter(
        status=WebhookDelivery.Status.PENDING, endpoint__is_active=False
    )
    return pending.update(status=WebhookDelivery.Status.FAILED, error=DROPPED)


def send_due(now: datetime | None = None, limit: int = 200) -> int:
    """Hand the deliveries that are due to the workers (once this transaction commits)."""
    now = now or timezone.now()
    due = WebhookDelivery.objects.filter(
        status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now, endpoint__is_active=True
    )
    pks = list(due.order_by("next_attempt_at").values_list("pk", flat=True)[:limit])
    WebhookDelivery.objects.filter(pk__in=pks).update(next_attempt_at=now + LEASE)
    for pk in pks:
        transaction.on_commit(partial(send_task, pk))
    return len(pks)


def send_task(pk: int) -> None:
    try:
        current_app.send_task(DELIVER_TASK, kwargs={"delivery_id": pk}, retry=False)
    except Exception as error:  # the broker is away: the lease runs out, the sweep resends
        log.warning("webhook delivery %s not sent (%r); the sweep will send it", pk, error)


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The webhook-signature header's value for this message (Standard Webhooks, v1)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def deliver(delivery_id: int, now: datetime | None = None) -> bool:
    """One attempt at a pending delivery; True if it was made (by this caller: a
    concurrent attempt of the same delivery claims it first and this one returns False)."""
    found = WebhookDelivery.objects.select_related("endpoint").filter(pk=delivery_id).first()
    if found is None or found.status != WebhookDelivery.Status.PENDING:
        return False
    if not found.endpoint.is_active:
        drop_switched_off(WebhookDelivery.objects.filter(pk=found.pk))
        return False
    now = now or timezone.now()
    claimed = WebhookDelivery.objects.filter(
        pk=found.pk, status=WebhookDelivery.Status.PENDING, attempts=found.attempts
    ).update(attempts=found.attempts + 1, last_attempt_at=now, next_attempt_at=now + LEASE)
    if not claimed:
        return False
    found.attempts += 1
    record(found, attempt(found, now), now)
    return True


def attempt(found: WebhookDelivery, now: datetime) -> dict[str, Any]:
    """POST the payload; what to record of the answer (and whether to try again)."""
    body = json.dumps(found.payload, separators=(",", ":")).encode()
    timestamp = int(now.timestamp())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "nlg-eval-webhooks/1",
        "webhook-id": found.message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(found.endpoint.secret, found.message_id, timestamp, body),
    }
    try:
        response = post(found.endpoint.url, body, headers)
    except WebhookRefused as error:
        return {"error": str(error), "final": True}
    except outbound.OutboundFailed as error:
        return {"error": str(error)}
    result = {"response_code": response.status, "response_body": outbound.excerpt(response.body)}
    if not 200 <= response.status < 300:
        result["error"] = f"HTTP {response.status}"
    return result


def record(found: WebhookDelivery, result: dict[str, Any], now: datetime) -> None:
    final = result.pop("final", False)
    if not result.get("error"):
        status = WebhookDelivery.Status.DELIVERED
    elif final or found.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
        status = WebhookDelivery.Status.FAILED
    else:
        status = WebhookDelivery.Status.PENDING
    wait = settings.WEBHOOK_RETRY_SECONDS * 2 ** (found.attempts - 1)
    fields = {
        "status": status,
        "next_attempt_at": now + timedelta(seconds=min(wait, 86_400)),
        "response_code": result.get("response_code"),
        "response_body": result.get("response_body", ""),
        "error": result.get("error", ""),
    }
    WebhookDelivery.objects.filter(pk=found.pk, attempts=found.attempts).update(**fields)
