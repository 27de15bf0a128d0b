"""Reviewing a campaign's Prolific submissions, against a small fake of Prolific's API on
127.0.0.1 (no network): approve, reject, returned and timed-out places."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import transaction
from django.urls import reverse

from annotation.assignment import lock_criterion
from annotation.identity import set_excluded
from annotation.loads import kept_loads, sync_pool
from annotation.models import Assignment, Criterion
from annotation.prolific import ProlificError, review_submissions
from tests.annotation.test_loads import counted_from_rows
from tests.factories import (
    make_annotator,
    make_assignment,
    make_campaign,
    make_hit,
    make_judged_hit,
    make_system_set,
)

pytestmark = pytest.mark.django_db
TOKEN = "fake-prolific-token"


class FakeProlific(BaseHTTPRequestHandler):
    """Two pages of the study's submissions; transitions recorded, as Prolific's API."""

    submissions: list[dict] = []
    transitions: dict[str, dict] = {}

    def do_GET(self):
        if not self._authorised():
            return
        base = f"http://127.0.0.1:{self.server.server_port}/api/v1/studies/study-1/submissions/"
        if self.path == "/api/v1/studies/study-1/submissions/":
            self._send(
                200,
                {"results": self.submissions[:2], "_links": {"next": {"href": base + "?page=2"}}},
            )
        elif self.path == "/api/v1/studies/study-1/submissions/?page=2":
            self._send(200, {"results": self.submissions[2:], "_links": {"next": {"href": None}}})
        else:
            self._send(404, {"error": "no such study"})

    def do_POST(self):
        if not self._authorised():
            return
        submission = self.path.split("/")[-3]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.transitions[submission] = body
        self._send(200, {"id": submission, "status": body["action"] + "D"})

    def _authorised(self) -> bool:
        if self.headers.get("Authorization") != f"Token {TOKEN}":
            self._send(401, {"error": "bad token"})
            return False
        return True

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def prolific(settings, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeProlific)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.PROLIFIC_API_URL = f"http://127.0.0.1:{server.server_port}/api/v1/"
    monkeypatch.setenv("EVAL_SECRET_PROLIFIC", TOKEN)
    FakeProlific.transitions = {}
    yield FakeProlific
    server.shutdown()


@pytest.fixture
def study(prolific):
    """A careful worker (a counted HIT), a careless one (excluded), one who returned the
    place with a HIT open, and a participant who never arrived."""
    campaign = make_campaign(
        outputs_per_hit=3, prolific_study_id="study-1", prolific_token_env="EVAL_SECRET_PROLIFIC"
    )
    _, _, items = make_system_set(campaign, systems=3, items=2)
    careful, careless, returner = (
        make_annotator(campaign, external_id=pid) for pid in ("careful", "careless", "returner")
    )
    make_judged_hit(list(items[0].outputs.all()), [100, 50, 20], annotator=careful)
    make_judged_hit(list(items[1].outputs.all()), [1, 1, 1], annotator=careless)
    set_excluded(careless, True)
    make_assignment(make_hit(list(items[1].outputs.all())), annotator=returner)
    with transaction.atomic():  # the loads counted, as the first hand-out would
        sync_pool(lock_criterion(campaign.criteria.get(criterion=Criterion.QUALITY)))
    prolific.submissions = [
        {"id": "s1", "participant_id": "careful", "status": "AWAITING REVIEW"},
        {"id": "s2", "participant_id": "careless", "status": "AWAITING REVIEW"},
        {"id": "s3", "participant_id": "returner", "status": "RETURNED"},
        {"id": "s4", "participant_id": "never-came", "status": "TIMED-OUT"},
    ]
    return campaign


def test_review_approves_passing_rejects_failing_and_releases_returned_places(study, prolific):
    criterion = study.criteria.get(criterion=Criterion.QUALITY)
    review = review_submissions(study)
    assert prolific.transitions["s1"] == {"action": "APPROVE"}
    assert prolific.transitions["s2"]["action"] == "REJECT"
    assert prolific.transitions["s2"]["rejection_category"] == "LOW_EFFORT"
    assert set(prolific.transitions) == {"s1", "s2"}
    assert (review.approved, review.rejected) == (["careful"], ["careless"])
    assert (review.released, review.unknown) == (["returner"], ["never-came"])
    returned = Assignment.objects.get(annotator__external_id="returner")
    assert returned.status == Assignment.Status.EXPIRED  # its HIT is back in the pool
    assert kept_loads(criterion) == counted_from_rows(criterion)


def test_review_from_the_admin_says_what_it_did(study, prolific, organiser):
    changelist = reverse("admin:annotation_campaign_changelist")
    data = {"action": "review_prolific_submissions", "_selected_action": [study.pk]}
    page = organiser.submit(organiser.get(changelist), data, action=changelist, follow=True)
    text = page.content.decode()
    assert "1 approved, 1 rejected, 1 returned or timed-out places" in text
    assert set(prolific.transitions) == {"s1", "s2"}


def test_review_refuses_a_token_variable_the_deployment_does_not_allow(study, prolific):
    study.prolific_token_env = "SECRET_KEY"
    with pytest.raises(ProlificError, match="not one this deployment allows"):
        review_submissions(study)
    assert prolific.transitions == {}


def test_review_with_a_wrong_token_stops_with_prolifics_answer(study, prolific, monkeypatch):
    monkeypatch.setenv("EVAL_SECRET_PROLIFIC", "wrong")
    with pytest.raises(ProlificError, match="401"):
        review_submissions(study)
    assert prolific.transitions == {}
    assert Assignment.objects.get(annotator__external_id="returner").status == "assigned"
