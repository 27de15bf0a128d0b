"""Prolific's webhook events in: a returned, timed-out or rejected place gives its open HITs
back to the pool at once (the same release as the review's, annotation/prolific.py), instead
of on the next review; a submission awaiting review or approved confirms the annotator, as
the poll would (their work counts from then on).

Prolific signs each event (docs.prolific.com, Webhooks, Verifying): the header
X-Prolific-Request-Signature is the base64 of HMAC-SHA256 under the workspace's hook secret
of X-Prolific-Request-Timestamp followed by the body. An event whose signature does not
match, or whose timestamp is more than MAX_AGE old (a replay), is refused. X-Event-ID names
the event: one seen before does nothing. Nor does an event that says again what an earlier
one said and was acted on (the same submission and status, under any event id): a signed
event replayed with a new id within MAX_AGE changes nothing. The payload of
submission.status.change is {resource_id (the submission, which Prolific put on the entry
link as SESSION_ID), event_type, participant_id, status}; as in the review, an event acts
on an annotator only if its submission is the session the annotator's Prolific id was bound
to on entry.
"""

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from annotation.handout.assignment import release
from annotation.identity import set_prolific_check
from annotation.models import Annotator, ProlificCheck
from annotation.prolific import AWAITING_REVIEW, GONE

from .models import ProlificEvent, ProlificHook

MAX_AGE_SECONDS = 300
SUBMISSION_EVENT = "submission.status.change"
RELEASED = (*GONE, "REJECTED")
CONFIRMING = (AWAITING_REVIEW, "APPROVED")
# How an outcome that changed nothing begins (an event that may be acted on later), and how
# one that repeats an earlier event's begins.
IGNORED = "ignored"
REPEATED = "repeated, nothing done: "


class SignatureRefused(Exception):
    pass


def verify(secret: str, timestamp: str, signature: str, body: bytes, now: float | None = None):
    """Raise SignatureRefused unless Prolific signed this body at this (recent) time."""
    try:
        sent = int(timestamp)
    except ValueError:
        raise SignatureRefused("no valid X-Prolific-Request-Timestamp") from None
    if abs((now or time.time()) - sent) > MAX_AGE_SECONDS:
        raise SignatureRefused("the event is too old (or from the future): a replay?")
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    if not hmac.compare_digest(base64.b64encode(digest), signature.encode()):
        raise SignatureRefused("the signature does not match")


@dataclass(frozen=True)
class Handled:
    outcome: str
    repeated: bool = False


def handle(hook: ProlificHook, event_id: str, payload: dict) -> Handled:
    """Act on one verified event, once per event id and once per submission and status."""
    fields = {
        "event_type": str(payload.get("event_type", ""))[:60],
        "participant_id": str(payload.get("participant_id", ""))[:200],
        "submission_id": str(payload.get("resource_id", ""))[:200],
        "status": str(payload.get("status", ""))[:40],
    }
    with transaction.atomic():
        # One event of the hook at a time, so two deliveries of one change (under one event
        # id or two) cannot both find it new.
        ProlificHook.objects.select_for_update().filter(pk=hook.pk).exists()
        seen = hook.events.filter(event_id=event_id).first()
        if seen is not None:
            return Handled(seen.outcome, repeated=True)
        acted = acted_on(hook, fields)
        outcome = f"{REPEATED}{acted.outcome}"[:300] if acted else act(hook, **fields)
        try:
            with transaction.atomic():
                ProlificEvent.objects.create(
                    hook=hook, event_id=event_id, outcome=outcome, **fields
                )
        except IntegrityError:  # the same event id at once on SQLite, which locks no row
            pass
    return Handled(outcome, repeated=acted is not None)


def acted_on(hook: ProlificHook, fields: dict) -> ProlificEvent | None:
    """An earlier event, under any id, that said the same of the same submission and was
    acted on."""
    if fields["event_type"] != SUBMISSION_EVENT or not fields["submission_id"]:
        return None
    same = hook.events.filter(
        event_type=SUBMISSION_EVENT,
        submission_id=fields["submission_id"],
        status=fields["status"],
    )
    return same.exclude(outcome__startswith=IGNORED).exclude(outcome__startswith=REPEATED).first()


def act(hook, event_type: str, participant_id: str, submission_id: str, status: str) -> str:
    if event_type != SUBMISSION_EVENT:
        return f"{IGNORED}: {event_type or 'no event type'}"
    annotator = Annotator.objects.filter(
        campaign_id=hook.campaign_id,
        source=Annotator.Source.PROLIFIC,
        external_id=participant_id,
    ).first()
    if annotator is None:
        return f"{IGNORED}: no annotator with this participant id"
    if annotator.study_data.get("session_id") != submission_id:
        return f"{IGNORED}: not the session this participant's id was bound to"
    if status in RELEASED:
        for criterion in hook.campaign.criteria.all():
            release(annotator, criterion)
        return f"{status}: open HITs released"
    if status in CONFIRMING and hook.campaign.asks_prolific:
        if annotator.prolific_check != ProlificCheck.CONFIRMED:
            set_prolific_check(annotator, ProlificCheck.CONFIRMED)
        return f"{status}: annotator confirmed"
    return f"{status}: nothing to do"
