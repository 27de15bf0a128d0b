"""Reviewing a campaign's Prolific submissions, against a small fake of Prolific's API on
127.0.0.1 (no network): approve, reject, returned and timed-out places; made-up Prolific ids,
which Prolific does not know, never count and are never approved."""

import json
from datetime import timedelta
from http.server import BaseHTTPRequestHandler

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from annotation.handout.assignment import lock_criterion
from annotation.handout.loads import recount_loads, sync_pool
from annotation.identity import set_excluded, set_prolific_check
from annotation.models import (
    QUALITY,
    Annotator,
    Assignment,
    CampaignCriterion,
    Judgment,
    ProlificCheck,
)
from annotation.prolific import ProlificError, poll_studies, review_submissions
from annotation.tasks import poll_prolific
from tests.annotation.test_loads import counted_from_rows
from tests.annotation.test_views import answers, send_answers, take_hit
from tests.factories import (
    make_annotator,
    make_assignment,
    make_campaign,
    make_hit,
    make_judged_hit,
    make_system_set,
)
from tests.handout import kept_loads
from tests.receivers import serving
from tests.world import Person

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
    with serving(FakeProlific) as server:
        settings.PROLIFIC_API_URL = f"http://127.0.0.1:{server.server_port}/api/v1/"
        monkeypatch.setenv("EVAL_SECRET_PROLIFIC", TOKEN)
        FakeProlific.transitions = {}
        yield FakeProlific


@pytest.fixture
def study(prolific):
    """A careful worker (a counted HIT), a careless one (excluded), one who returned the
    place with a HIT open, and a participant who never arrived."""
    campaign = make_campaign(
        outputs_per_hit=3, prolific_study_id="study-1", prolific_token_env="EVAL_SECRET_PROLIFIC"
    )
    _, _, items = make_system_set(campaign, systems=3, items=2)
    # Each bound to the session of their submission (its id: Prolific's SESSION_ID).
    careful, careless, returner = (
        make_annotator(campaign, external_id=pid, study_data={"session_id": session})
        for pid, session in (("careful", "s1"), ("careless", "s2"), ("returner", "s3"))
    )
    make_judged_hit(list(items[0].outputs.all()), [100, 50, 20], annotator=careful)
    make_judged_hit(list(items[1].outputs.all()), [1, 1, 1], annotator=careless)
    set_excluded(careless, True)
    make_assignment(make_hit(list(items[1].outputs.all())), annotator=returner)
    with transaction.atomic():  # the loads counted, as the first hand-out would
        sync_pool(lock_criterion(campaign.criteria.get(name=QUALITY)))
    prolific.submissions = [
        {"id": "s1", "participant_id": "careful", "status": "AWAITING REVIEW"},
        {"id": "s2", "participant_id": "careless", "status": "AWAITING REVIEW"},
        {"id": "s3", "participant_id": "returner", "status": "RETURNED"},
        {"id": "s4", "participant_id": "never-came", "status": "TIMED-OUT"},
    ]
    return campaign


def test_review_approves_passing_rejects_failing_and_releases_returned_places(study, prolific):
    criterion = study.criteria.get(name=QUALITY)
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


# Made-up Prolific ids ----------------------------------------------------------------------

MADE_UP = 100  # as the red-team pass: 100 invented PIDs
OVER_HTTP = 3  # of which this many come in through the entry link; the rest are rows
HITS_EACH = 2


def enter(campaign, pid: str, session: str = "") -> Person:
    """Arrive through the study's link as `pid`, in the session Prolific gave them."""
    person = Person()
    query = {"PROLIFIC_PID": pid, "STUDY_ID": "study-1", "SESSION_ID": session or f"s-{pid}"}
    response = person.get(reverse("annotation:entry", args=[campaign.slug, "quality"]), query)
    assert response.status_code == 302
    person.annotator = Annotator.objects.get(campaign=campaign, external_id=pid)
    return person


def work_over_http(campaign, pid: str, session: str = "") -> Person:
    """Enter through the study's link as `pid` and submit a HIT (their last: the campaign
    gives one each)."""
    person = enter(campaign, pid, session)
    assignment = take_hit(person, campaign)
    assert send_answers(person, assignment, answers(assignment)).status_code == 302
    return person


@pytest.fixture
def invented(prolific):
    """A campaign that can ask Prolific: two real participants with a HIT each and one with
    none, all awaiting review on Prolific; 100 made-up ids with HITs, unknown to Prolific."""
    campaign = make_campaign(
        outputs_per_hit=3,
        min_seconds_per_hit=0,
        max_hits_per_annotator=1,
        prolific_study_id="study-1",
        prolific_token_env="EVAL_SECRET_PROLIFIC",
    )
    _, _, items = make_system_set(campaign, systems=3, items=8)
    for pid in ("real-1", "real-2", *(f"made-up-{n}" for n in range(OVER_HTTP))):
        work_over_http(campaign, pid)
    enter(campaign, "real-idle")  # found no time for a HIT
    outputs = [list(item.outputs.all()) for item in items]
    for n in range(OVER_HTTP, MADE_UP):
        # As the entry link makes them in this campaign (tests/annotation/test_identity.py).
        fake = make_annotator(
            campaign, external_id=f"made-up-{n}", prolific_check=ProlificCheck.AWAITING
        )
        for h in range(HITS_EACH):
            make_judged_hit(outputs[(n + h) % len(items)], [30, 20, 10], annotator=fake)
    prolific.submissions = [
        {"id": f"s-{pid}", "participant_id": pid, "status": "AWAITING REVIEW"}
        for pid in ("real-1", "real-2", "real-idle")
    ]
    return campaign


def counted_annotators(campaign) -> set[str]:
    judgments = Judgment.objects.counted().filter(assignment__hit__campaign=campaign)
    names = judgments.values_list("assignment__annotator__external_id", flat=True)
    assert set(names) == set(
        Assignment.objects.counted()
        .filter(hit__campaign=campaign)
        .values_list("annotator__external_id", flat=True)
    )
    return set(names)


def test_made_up_prolific_ids_never_count_nor_get_approved(invented, prolific):
    criterion = invented.criteria.get(name=QUALITY)
    made_up = Annotator.objects.filter(external_id__startswith="made-up-")
    assert made_up.count() == MADE_UP
    their_hits = Assignment.objects.submitted().filter(annotator__in=made_up).count()
    assert their_hits == OVER_HTTP + (MADE_UP - OVER_HTTP) * HITS_EACH
    # Nobody counts before Prolific vouches for them, and the loads know it.
    assert counted_annotators(invented) == set()
    assert kept_loads(criterion) == counted_from_rows(criterion)
    version = CampaignCriterion.objects.get(pk=criterion.pk).judgments_version

    assert poll_studies() == 1  # the sweep asks Prolific
    assert counted_annotators(invented) == {"real-1", "real-2"}
    assert kept_loads(criterion) == counted_from_rows(criterion)
    criterion.refresh_from_db()
    assert criterion.judgments_version > version  # recorded with the change
    assert set(made_up.values_list("prolific_check", flat=True)) == {ProlificCheck.NOT_IN_STUDY}

    review = review_submissions(invented)
    assert sorted(review.approved) == ["real-1", "real-2"]
    assert (review.rejected, review.held) == ([], ["real-idle"])
    assert len(review.flagged) == MADE_UP
    assert set(prolific.transitions) == {"s-real-1", "s-real-2"}
    assert counted_annotators(invented) == {"real-1", "real-2"}
    assert kept_loads(criterion) == counted_from_rows(criterion)


def test_review_flags_an_annotator_who_has_no_submission_and_counts_them_once_found(
    study, prolific
):
    """An annotator from before the campaign could ask (counted) is flagged when the review
    finds no submission of theirs, and counts again once a later review finds one."""
    criterion = study.criteria.get(name=QUALITY)
    careful = Annotator.objects.get(external_id="careful")
    prolific.submissions = [s for s in prolific.submissions if s["participant_id"] != "careful"]
    review = review_submissions(study)
    assert review.flagged == ["careful"]
    assert "s1" not in prolific.transitions
    assert not Judgment.objects.counted().filter(assignment__annotator=careful).exists()
    assert kept_loads(criterion) == counted_from_rows(criterion)
    prolific.submissions.append(
        {"id": "s1", "participant_id": "careful", "status": "AWAITING REVIEW"}
    )
    assert review_submissions(study).approved == ["careful"]
    careful.refresh_from_db()
    assert careful.prolific_check == ProlificCheck.CONFIRMED
    assert Judgment.objects.counted().filter(assignment__annotator=careful).count() == 3
    assert kept_loads(criterion) == counted_from_rows(criterion)


def test_poll_studies_asks_each_campaign_once_per_interval(study, prolific, settings):
    settings.PROLIFIC_POLL_SECONDS = 60
    careful, careless = (Annotator.objects.get(external_id=p) for p in ("careful", "careless"))
    set_prolific_check(careful, ProlificCheck.AWAITING)
    poll_prolific()  # the periodic task polls
    careful.refresh_from_db()
    assert careful.prolific_check == ProlificCheck.CONFIRMED
    set_prolific_check(careless, ProlificCheck.AWAITING)
    assert poll_studies() == 0  # asked a moment ago
    later = timezone.now() + timedelta(seconds=61)
    assert poll_studies(now=later) == 1
    careless.refresh_from_db()
    assert careless.prolific_check == ProlificCheck.CONFIRMED
    assert poll_studies(now=later + timedelta(seconds=61)) == 0  # nobody awaiting
    assert prolific.transitions == {}  # polls only ask; the review decides pay


def test_poll_studies_checks_annotators_who_arrived_before_the_campaign_could_ask(study, prolific):
    """Annotators who came before the campaign named its study and token were never asked
    about: the sweep asks about them too, so an id Prolific does not know stops counting
    (the red team's early load-test ids were counted, then paid)."""
    criterion = study.criteria.get(name=QUALITY)
    early = make_annotator(study, external_id="load-test-1", study_data={"session_id": "x"})
    make_judged_hit(list(study.items.first().outputs.all()), [9, 8, 7], annotator=early)
    with transaction.atomic():
        recount_loads(lock_criterion(criterion))  # the rows made here counted, as handed out
    careful = Annotator.objects.get(external_id="careful")
    assert {careful.prolific_check, early.prolific_check} == {ProlificCheck.NOT_ASKED}
    assert poll_studies() == 1
    careful.refresh_from_db()
    early.refresh_from_db()
    assert careful.prolific_check == ProlificCheck.CONFIRMED
    assert early.prolific_check == ProlificCheck.NOT_IN_STUDY
    assert counted_annotators(study) == {"careful"}
    assert kept_loads(criterion) == counted_from_rows(criterion)
    assert poll_studies(now=timezone.now() + timedelta(days=1)) == 0  # all asked about now


def test_poll_studies_with_prolific_unreachable_leaves_annotators_awaiting(study, settings):
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9/api/v1/"  # nothing listens there
    careful = Annotator.objects.get(external_id="careful")
    set_prolific_check(careful, ProlificCheck.AWAITING)
    assert poll_studies() == 0
    careful.refresh_from_db()
    assert careful.prolific_check == ProlificCheck.AWAITING
    assert not Judgment.objects.counted().exists()


def test_review_confirms_only_the_session_prolific_gave_the_participant(invented, prolific):
    """Someone who enters first with a real participant's id and a made-up session holds
    the id here (the participant, coming second, is refused), but Prolific's submission
    names the participant's own session: the squatter's HIT never counts, and the
    participant's submission is held for the organiser, neither approved nor rejected for
    the squatter's work."""
    squatter = work_over_http(invented, "real-3", session="made-up-session").annotator
    set_excluded(squatter, True)  # careless work: still no reason to reject the participant
    response = Person().get(
        reverse("annotation:entry", args=[invented.slug, "quality"]),
        {"PROLIFIC_PID": "real-3", "STUDY_ID": "study-1", "SESSION_ID": "s-real-3"},
    )
    assert response.status_code == 403
    prolific.submissions.append(
        {"id": "s-real-3", "participant_id": "real-3", "status": "AWAITING REVIEW"}
    )
    review = review_submissions(invented)
    assert "real-3" in review.flagged and "real-3" in review.held
    assert "s-real-3" not in prolific.transitions
    assert counted_annotators(invented) == {"real-1", "real-2"}
    squatter.refresh_from_db()
    assert squatter.prolific_check == ProlificCheck.NOT_IN_STUDY
    assert squatter.study_data["session_id"] == "made-up-session"
