"""Prolific's events, signed as Prolific signs them: a returned place's open HITs go back
to the pool in the request itself; a submission awaiting review confirms its annotator."""

import base64
import hashlib
import hmac
import json
import time

import pytest
from django.db import transaction

from annotation.handout.assignment import lock_criterion
from annotation.handout.loads import recount_loads, sync_pool
from annotation.identity import set_prolific_check
from annotation.models import QUALITY, Assignment, ProlificCheck
from api.models import ProlificEvent, ProlificHook
from api.prolific_events import handle
from tests.annotation.test_assignment import needs_postgres, run_together
from tests.annotation.test_loads import counted_from_rows
from tests.api.conftest import ApiClient
from tests.factories import (
    make_annotator,
    make_assignment,
    make_campaign,
    make_hit,
    make_system_set,
)
from tests.handout import kept_loads

SECRET = "prolific-workspace-secret"


@pytest.fixture
def study(db):
    campaign = make_campaign(
        slug="study",
        outputs_per_hit=3,
        prolific_study_id="study-1",
        prolific_token_env="EVAL_SECRET_PROLIFIC",
    )
    _, _, items = make_system_set(campaign, systems=3, items=2)
    ProlificHook.objects.create(campaign=campaign, secret=SECRET)
    returner = make_annotator(
        campaign,
        external_id="returner",
        study_data={"session_id": "sub-1"},
        prolific_check=ProlificCheck.AWAITING,
    )
    make_assignment(make_hit(list(items[0].outputs.all())), annotator=returner)
    with transaction.atomic():  # the loads counted, as the first hand-out would
        sync_pool(lock_criterion(campaign.criteria.get(name=QUALITY)))
    return campaign


def send(payload: dict, secret: str = SECRET, event_id: str = "evt-1", sent_at=None, slug="study"):
    body = json.dumps(payload).encode()
    timestamp = str(int(sent_at if sent_at is not None else time.time()))
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    headers = {
        "HTTP_X_PROLIFIC_REQUEST_SIGNATURE": base64.b64encode(digest).decode(),
        "HTTP_X_PROLIFIC_REQUEST_TIMESTAMP": timestamp,
        "HTTP_X_EVENT_ID": event_id,
    }
    client = ApiClient()
    return client.call(
        "POST", f"/prolific/{slug}/events/", body, content_type="application/json", **headers
    )


def status_event(status: str, participant="returner", submission="sub-1") -> dict:
    return {
        "resource_id": submission,
        "event_type": "submission.status.change",
        "participant_id": participant,
        "status": status,
    }


@pytest.mark.parametrize("status", ["RETURNED", "TIMED-OUT", "REJECTED"])
def test_a_place_given_up_releases_its_open_hits_at_once(study, status):
    criterion = study.criteria.get(name=QUALITY)
    response = send(status_event(status))
    assert response.status_code == 200, response.content
    assert response.json() == {"outcome": f"{status}: open HITs released", "repeated": False}
    assignment = Assignment.objects.get(annotator__external_id="returner")
    assert assignment.status == Assignment.Status.EXPIRED  # its HIT is back in the pool
    assert kept_loads(criterion) == counted_from_rows(criterion)
    assert ProlificEvent.objects.get().status == status


def test_a_submission_awaiting_review_confirms_the_annotator(study):
    response = send(status_event("AWAITING REVIEW"))
    assert response.json()["outcome"] == "AWAITING REVIEW: annotator confirmed"
    annotator = study.annotators.get(external_id="returner")
    assert annotator.prolific_check == ProlificCheck.CONFIRMED
    assert Assignment.objects.get(annotator=annotator).status == Assignment.Status.ASSIGNED


def test_the_same_event_twice_acts_once(study):
    send(status_event("RETURNED"))
    again = send(status_event("RETURNED"))
    assert again.json()["repeated"] is True
    assert ProlificEvent.objects.count() == 1


def test_a_signed_event_replayed_with_a_new_event_id_acts_no_more(study):
    """Within the 5 minutes a signature is good for, an event resent under another X-Event-ID
    releases nothing new: the returned participant's browser took another HIT since."""
    criterion = study.criteria.get(name=QUALITY)
    first = send(status_event("RETURNED"), event_id="evt-1").json()
    assert first == {"outcome": "RETURNED: open HITs released", "repeated": False}
    returner = study.annotators.get(external_id="returner")
    later = make_assignment(make_hit(list(study.items.last().outputs.all())), annotator=returner)
    with transaction.atomic():
        recount_loads(lock_criterion(criterion))  # the HIT made here counted, as handed out
    replayed = send(status_event("RETURNED"), event_id="evt-2")
    assert replayed.status_code == 200
    assert replayed.json()["repeated"] is True
    assert replayed.json()["outcome"].startswith("repeated, nothing done")
    later.refresh_from_db()
    assert later.status == Assignment.Status.ASSIGNED
    assert kept_loads(criterion) == counted_from_rows(criterion)
    assert list(ProlificEvent.objects.order_by("pk").values_list("event_id", flat=True)) == [
        "evt-1",
        "evt-2",
    ]


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_replays_under_new_event_ids_at_once_act_once(study):
    """Six deliveries of one change, each under its own event id, at the same moment: the
    hook's row lock lets one act and the others find it done."""
    hook = ProlificHook.objects.get(campaign=study)
    calls = [
        lambda n=n: handle(hook, f"evt-{n}", status_event("RETURNED")).repeated for n in range(6)
    ]
    assert sorted(run_together(*calls)) == [False, True, True, True, True, True]
    outcomes = ProlificEvent.objects.values_list("outcome", flat=True)
    assert sum(not outcome.startswith("repeated") for outcome in outcomes) == 1
    assert Assignment.objects.get().status == Assignment.Status.EXPIRED


def test_a_replayed_confirmation_does_not_undo_a_later_flag(study):
    send(status_event("AWAITING REVIEW"), event_id="evt-1")
    returner = study.annotators.get(external_id="returner")
    set_prolific_check(returner, ProlificCheck.NOT_IN_STUDY)  # a review found otherwise
    replayed = send(status_event("AWAITING REVIEW"), event_id="evt-2")
    assert replayed.json()["repeated"] is True
    returner.refresh_from_db()
    assert returner.prolific_check == ProlificCheck.NOT_IN_STUDY


def test_an_event_ignored_once_is_acted_on_when_it_can_be(study):
    """An event that could not be acted on (no annotator with the id yet) is no reason to
    ignore the same news later."""
    ignored = send(status_event("RETURNED", "late"), event_id="e1").json()
    assert ignored["outcome"].startswith("ignored")
    late = make_annotator(study, external_id="late", study_data={"session_id": "sub-1"})
    hit = make_hit(list(study.items.last().outputs.all()))
    open_hit = make_assignment(hit, annotator=late)
    assert send(status_event("RETURNED", "late"), event_id="e2").json()["repeated"] is False
    open_hit.refresh_from_db()
    assert open_hit.status == Assignment.Status.EXPIRED


@pytest.mark.parametrize(
    "signed",
    [
        {"secret": "someone-else"},
        {"sent_at": time.time() - 3600},  # a replay of an old event
    ],
)
def test_an_event_prolific_did_not_sign_now_changes_nothing(study, signed):
    response = send(status_event("RETURNED"), **signed)
    assert response.status_code == 401
    assert Assignment.objects.get().status == Assignment.Status.ASSIGNED
    assert not ProlificEvent.objects.exists()


def test_a_body_changed_after_signing_is_refused(study):
    body = json.dumps(status_event("AWAITING REVIEW")).encode()
    timestamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    tampered = json.dumps(status_event("RETURNED"))
    response = ApiClient().call(
        "POST",
        "/prolific/study/events/",
        tampered,
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=base64.b64encode(digest).decode(),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
    )
    assert response.status_code == 401
    assert Assignment.objects.get().status == Assignment.Status.ASSIGNED


def test_an_event_for_another_session_of_the_id_releases_nothing(study):
    response = send(status_event("RETURNED", submission="made-up-session"))
    assert response.json()["outcome"].startswith("ignored")
    assert Assignment.objects.get().status == Assignment.Status.ASSIGNED


def test_a_campaign_without_a_hook_is_404(study):
    make_campaign(slug="nohook")
    assert send(status_event("RETURNED"), slug="nohook").status_code == 404
    assert Assignment.objects.get().status == Assignment.Status.ASSIGNED
