from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from annotation.handout.assignment import lock_criterion
from annotation.handout.loads import sync_pool
from annotation.identity import (
    EntryRefused,
    annotator_from_link,
    completion_url,
    invite,
    invite_path,
    prolific_entry_url,
    set_excluded,
    set_prolific_check,
)
from annotation.models import (
    Annotator,
    Assignment,
    CampaignCriterion,
    Judgment,
    ProlificCheck,
)
from tests.annotation.test_loads import counted_from_rows
from tests.annotation.test_views import (
    answers,
    configure,
    hit_url,
    send_answers,
    take_hit,
    url,
)
from tests.factories import (
    make_annotator,
    make_campaign,
    make_item,
    make_judged_hit,
    make_output,
)
from tests.handout import kept_loads
from tests.world import Person

pytestmark = pytest.mark.django_db


# Per platform: the key that ties an id to its first session, the rest of a link's data, and
# the refusal of a second session.
FIRST_SESSION = {
    "prolific": ("session_id", {"study_id": "s"}, "another Prolific session"),
    "mturk": ("assignment_id", {"hit_id": "h"}, "another Mechanical Turk assignment"),
}


@pytest.mark.parametrize("platform", FIRST_SESSION)
def test_annotator_from_link_binds_an_id_to_its_first_session(platform):
    """A Prolific id to its first session, a Mechanical Turk worker id to its first
    assignment."""
    key, rest, refusal = FIRST_SESSION[platform]
    campaign = make_campaign(accepts_mturk=platform == "mturk")
    first = annotator_from_link(campaign, platform, "p1", {**rest, key: "a"})
    # The same participant on another device comes with the same session.
    assert annotator_from_link(campaign, platform, "p1", {**rest, key: "a"}) == first
    with pytest.raises(EntryRefused, match=refusal):
        annotator_from_link(campaign, platform, "p1", {**rest, key: "b"})
    # The browser session that holds them may come back through any link, changing nothing.
    assert annotator_from_link(campaign, platform, "p1", {key: "b"}, first.pk) == first
    first.refresh_from_db()
    assert first.study_data == {**rest, key: "a"}
    assert Annotator.objects.count() == 1


def test_annotator_from_link_refuses_mturk_unless_the_campaign_accepts_it():
    campaign = make_campaign()  # Mechanical Turk closed on 30 September 2026: off by default
    with pytest.raises(EntryRefused, match="does not take Mechanical Turk links"):
        annotator_from_link(campaign, "mturk", "W1", {"assignment_id": "a1", "hit_id": "h"})
    assert not Annotator.objects.exists()


def test_annotator_from_link_binds_an_id_that_came_without_its_session_to_its_browser():
    campaign = make_campaign()
    first = annotator_from_link(campaign, "prolific", "p1", {"study_id": "s", "session_id": ""})
    with pytest.raises(EntryRefused, match="another Prolific session"):
        annotator_from_link(campaign, "prolific", "p1", {"study_id": "s", "session_id": ""})
    assert annotator_from_link(campaign, "prolific", "p1", {}, first.pk) == first


def test_annotator_from_link_refuses_another_study_of_a_campaign_that_names_its_own():
    campaign = make_campaign(prolific_study_id="study-1")
    with pytest.raises(EntryRefused, match="another Prolific study"):
        annotator_from_link(campaign, "prolific", "p1", {"study_id": "other", "session_id": "a"})
    assert not Annotator.objects.exists()


def test_annotator_from_link_awaits_prolific_where_the_campaign_can_ask_it():
    asks = make_campaign(prolific_study_id="study-1", prolific_token_env="EVAL_SECRET_P")
    study = {"study_id": "study-1", "session_id": "a"}
    assert annotator_from_link(asks, "prolific", "p1", study).prolific_check == "awaiting"
    assert annotator_from_link(make_campaign(), "prolific", "p1", study).prolific_check == ""
    configure(asks, accepts_mturk=True)
    assert annotator_from_link(asks, "mturk", "W1", {"assignment_id": "a"}).prolific_check == ""


def test_set_prolific_check_counts_only_confirmed_work_and_records_each_change():
    item = make_item()
    annotator = make_annotator(item.campaign, prolific_check=ProlificCheck.AWAITING)
    make_judged_hit([make_output(item), make_output(item)], [10, 20], annotator=annotator)
    criterion = item.campaign.criteria.get(name="quality")
    with transaction.atomic():  # the loads counted, as the first hand-out would
        sync_pool(lock_criterion(criterion))
    version = CampaignCriterion.objects.get(pk=criterion.pk).judgments_version
    assert not Judgment.objects.counted().exists()
    set_prolific_check(annotator, ProlificCheck.CONFIRMED)
    assert Judgment.objects.counted().count() == 2
    assert kept_loads(criterion) == counted_from_rows(criterion)
    set_prolific_check(annotator, ProlificCheck.NOT_IN_STUDY)
    assert not Assignment.objects.counted().exists()
    assert kept_loads(criterion) == counted_from_rows(criterion)
    set_prolific_check(annotator, ProlificCheck.AWAITING)  # still out: nothing to record
    criterion.refresh_from_db()
    assert criterion.judgments_version == version + 2
    annotator.refresh_from_db()
    assert annotator.prolific_check == ProlificCheck.AWAITING


def test_annotator_from_link_is_per_campaign_and_platform():
    campaign = make_campaign(accepts_mturk=True)
    annotator_from_link(campaign, "prolific", "same", {})
    annotator_from_link(campaign, "mturk", "same", {})
    annotator_from_link(make_campaign(), "prolific", "same", {})
    assert Annotator.objects.count() == 3


def test_invite_makes_a_named_annotator_with_a_private_link():
    campaign = make_campaign(slug="e2e")
    annotator = invite(campaign, "Ada")
    assert (annotator.source, annotator.name) == ("invited", "Ada")
    assert invite_path(annotator, "quality") == f"/annotate/e2e/quality/?token={annotator.token}"
    assert len(annotator.token) >= 32


def test_completion_url_only_for_prolific():
    campaign = make_campaign(completion_code="C0DE")
    prolific = annotator_from_link(campaign, "prolific", "p", {})
    assert (
        completion_url(prolific, "C0DE") == "https://app.prolific.com/submissions/complete?cc=C0DE"
    )
    assert completion_url(invite(campaign, "Ada"), "C0DE") == ""


def test_set_excluded_removes_judgments_from_rankings_reversibly():
    item = make_item()
    outputs = [make_output(item), make_output(item)]
    assignment = make_judged_hit(outputs, [10, 20])
    annotator = assignment.annotator
    versions = dict(item.campaign.criteria.values_list("name", "judgments_version"))
    set_excluded(annotator, True)
    annotator.refresh_from_db()
    assert annotator.is_excluded
    assert not Judgment.objects.counted().exists()
    set_excluded(annotator, False)
    assert Judgment.objects.counted().count() == 2
    # Each change is recorded on the criterion the annotator worked on, and only there.
    after = dict(item.campaign.criteria.values_list("name", "judgments_version"))
    assert after == {"quality": versions["quality"] + 2, "naturalness": versions["naturalness"]}


def test_invite_annotators_command_prints_a_link_per_criterion(settings):
    settings.SITE_URL = "https://eval.example/"
    campaign = make_campaign(slug="pilot")
    out = StringIO()
    call_command("invite_annotators", "pilot", "Ada", "Grace", stdout=out)
    call_command("invite_annotators", "pilot", "Ada", stdout=out)  # again: the same link
    ada = Annotator.objects.get(campaign=campaign, name="Ada")
    lines = out.getvalue().splitlines()
    assert len(lines) == 6
    link = f"Ada\tquality\thttps://eval.example/annotate/pilot/quality/?token={ada.token}"
    assert lines.count(link) == 2
    assert Annotator.objects.filter(source="invited").count() == 2


# A Prolific id is public: the attack of a forged one --------------------------------------


def test_forged_prolific_id_with_another_session_reaches_nothing_of_the_victim(campaign):
    victim = Person()
    victim.enter(campaign, pid="victim")
    assignment = take_hit(victim, campaign)
    recorded = Annotator.objects.get(external_id="victim").study_data
    forged = {"PROLIFIC_PID": "victim", "STUDY_ID": "study-1", "SESSION_ID": "made-up"}
    attacker = refused_entry(campaign, forged, "another Prolific session")
    assert_reaches_nothing(attacker, campaign, assignment)
    assert Annotator.objects.get(external_id="victim").study_data == recorded
    assert Annotator.objects.filter(campaign=campaign).count() == 1
    # The victim goes on; on a second device, with their own session id, too.
    assert send_answers(victim, assignment, answers(assignment)).status_code == 302
    assert Person().enter(campaign, pid="victim") == victim.annotator
    assert Judgment.objects.filter(assignment__annotator=victim.annotator).count() == 3


def test_forged_mturk_worker_id_with_another_assignment_reaches_nothing_of_the_victim(campaign):
    configure(campaign, accepts_mturk=True)
    victim = Person()
    mturk = {"workerId": "VICTIM", "assignmentId": "A-victim", "hitId": "H1"}
    assert victim.get(url("entry", campaign), mturk).status_code == 302
    victim.annotator = Annotator.objects.get(external_id="VICTIM")
    assignment = take_hit(victim, campaign)
    # The red team's link: the victim's worker id, any assignment.
    forged = {"workerId": "VICTIM", "assignmentId": "x", "hitId": "x"}
    attacker = refused_entry(campaign, forged, "another Mechanical Turk assignment")
    assert_reaches_nothing(attacker, campaign, assignment)
    assert Annotator.objects.get(external_id="VICTIM").study_data["assignment_id"] == "A-victim"
    # The victim goes on; on a second device, with their own assignment id, too.
    assert send_answers(victim, assignment, answers(assignment)).status_code == 302
    assert Person().get(url("entry", campaign), mturk).status_code == 302
    assert Judgment.objects.filter(assignment__annotator=victim.annotator).count() == 3


def test_mturk_link_is_refused_where_the_campaign_does_not_accept_it(campaign, worker):
    assignment = take_hit(worker, campaign)
    Annotator.objects.filter(pk=worker.annotator.pk).update(source="mturk", external_id="W1")
    forged = {"workerId": "W1", "assignmentId": "x", "hitId": "x"}
    attacker = refused_entry(campaign, forged, "does not take Mechanical Turk links")
    assert_reaches_nothing(attacker, campaign, assignment)
    assert Annotator.objects.filter(campaign=campaign).count() == 1


def test_mturk_link_without_its_assignment_id_is_refused(campaign):
    configure(campaign, accepts_mturk=True)
    for assignment_id in ("", "ASSIGNMENT_ID_NOT_AVAILABLE"):
        query = {"workerId": "W1", "assignmentId": assignment_id, "hitId": "x"}
        response = Person().get(url("entry", campaign), query)
        assert response.status_code == 400
        assert "assignment id" in response.content.decode()
    assert not Annotator.objects.exists()


def test_prolific_id_that_came_without_a_session_is_reached_from_its_browser_only(campaign):
    victim = Person()
    bare = {"PROLIFIC_PID": "victim", "STUDY_ID": "study-1"}  # no SESSION_ID: bound to nothing
    assert victim.get(url("entry", campaign), bare).status_code == 302
    victim.annotator = Annotator.objects.get(external_id="victim")
    assignment = take_hit(victim, campaign)
    attacker = refused_entry(campaign, bare, "")
    assert_reaches_nothing(attacker, campaign, assignment)
    assert victim.get(url("entry", campaign), bare).status_code == 302  # its own browser


def test_invitation_is_reached_only_with_its_token(campaign):
    ada = invite(campaign, "Ada")
    invited = Person()
    assert invited.get(url("entry", campaign), {"token": ada.token}).status_code == 302
    invited.annotator = ada
    assignment = take_hit(invited, campaign)
    configure(campaign, accepts_mturk=True)
    attacker = Person()
    assert attacker.get(url("entry", campaign), {"token": "guessed-token"}).status_code == 404
    # Her name as another platform's id makes an annotator of that platform, not her.
    for forged in (
        {"PROLIFIC_PID": "Ada", "STUDY_ID": "study-1", "SESSION_ID": "s"},
        {"workerId": "Ada", "assignmentId": "x", "hitId": "x"},
    ):
        assert attacker.get(url("entry", campaign), forged).status_code == 302
        assert attacker.get(hit_url(assignment)).status_code == 404
    assert Annotator.objects.filter(source="invited").get() == ada
    assignment.refresh_from_db()
    assert (assignment.annotator, assignment.status) == (ada, "assigned")


def refused_entry(campaign, query: dict, reason: str, person: Person | None = None) -> Person:
    """The browser (a new one unless `person`) whose entry link `query` was refused with a
    403 that says `reason`."""
    person = person or Person()
    response = person.get(url("entry", campaign), query)
    assert response.status_code == 403
    assert reason in response.content.decode()
    return person


def assert_reaches_nothing(attacker: Person, campaign, assignment) -> None:
    """The attacker's browser holds nobody: not the victim's HIT, nor a way to submit or
    finish it; the HIT is still the victim's, unanswered."""
    assert attacker.get(url("entry", campaign)).status_code == 403
    assert attacker.get(hit_url(assignment)).status_code == 404
    assert attacker.send("POST", hit_url(assignment), answers(assignment)).status_code == 404
    assert attacker.send("POST", url("start", campaign)).status_code == 404
    assert attacker.send("POST", url("finish", campaign)).status_code == 404
    victim = assignment.annotator
    assignment.refresh_from_db()
    assert (assignment.annotator, assignment.status) == (victim, "assigned")
    assert not Judgment.objects.filter(assignment=assignment).exists()


def test_entry_refuses_a_link_of_another_study(stranger):
    campaign = make_campaign(prolific_study_id="study-1")
    query = {"PROLIFIC_PID": "p1", "STUDY_ID": "study-2", "SESSION_ID": "x"}
    refused_entry(campaign, query, "another Prolific study", stranger)
    assert not Annotator.objects.exists()


def test_invite_annotators_command_takes_the_site_url_from_its_option(settings):
    settings.SITE_URL = ""
    campaign = make_campaign(slug="pilot")
    out = StringIO()
    call_command("invite_annotators", "pilot", "Ada", "--site-url=https://x.example", stdout=out)
    ada = Annotator.objects.get(campaign=campaign, name="Ada")
    assert f"https://x.example/annotate/pilot/quality/?token={ada.token}" in out.getvalue()


def test_invite_annotators_command_without_a_site_url_invites_nobody(settings):
    settings.SITE_URL = ""
    make_campaign(slug="pilot")
    with pytest.raises(CommandError, match="set SITE_URL"):
        call_command("invite_annotators", "pilot", "Ada", stdout=StringIO())
    assert not Annotator.objects.exists()


def test_prolific_entry_url_comes_from_the_request_host_else_site_url(rf, settings):
    settings.SITE_URL = "https://configured.example"
    settings.ALLOWED_HOSTS = ["eval.example.org"]
    criterion = make_campaign(slug="e2e").criteria.get(name="quality")
    request = rf.get("/admin/", secure=True, HTTP_HOST="eval.example.org")
    from_request = prolific_entry_url(criterion, request)
    assert from_request.startswith("https://eval.example.org/annotate/e2e/quality/?PROLIFIC_PID=")
    assert prolific_entry_url(criterion).startswith("https://configured.example/annotate/e2e/")
