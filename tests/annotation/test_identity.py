from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.identity import (
    annotator_from_link,
    completion_url,
    invite,
    invite_path,
    prolific_entry_url,
    set_excluded,
)
from annotation.models import Annotator, Judgment
from tests.factories import make_campaign, make_item, make_judged_hit, make_output

pytestmark = pytest.mark.django_db


def test_annotator_from_link_finds_the_same_worker_again_and_keeps_latest_study():
    campaign = make_campaign()
    first = annotator_from_link(campaign, "prolific", "p1", {"session_id": "a"})
    again = annotator_from_link(campaign, "prolific", "p1", {"session_id": "b"})
    assert first.pk == again.pk
    again.refresh_from_db()
    assert again.study_data == {"session_id": "b"}
    assert Annotator.objects.count() == 1


def test_annotator_from_link_is_per_campaign_and_platform():
    campaign = make_campaign()
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
    versions = dict(item.campaign.criteria.values_list("criterion", "judgments_version"))
    set_excluded(annotator, True)
    annotator.refresh_from_db()
    assert annotator.is_excluded
    assert not Judgment.objects.counted().exists()
    set_excluded(annotator, False)
    assert Judgment.objects.counted().count() == 2
    # Each change is recorded on the criterion the annotator worked on, and only there.
    after = dict(item.campaign.criteria.values_list("criterion", "judgments_version"))
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
    criterion = make_campaign(slug="e2e").criteria.get(criterion="quality")
    request = rf.get("/admin/", secure=True, HTTP_HOST="eval.example.org")
    from_request = prolific_entry_url(criterion, request)
    assert from_request.startswith("https://eval.example.org/annotate/e2e/quality/?PROLIFIC_PID=")
    assert prolific_entry_url(criterion).startswith("https://configured.example/annotate/e2e/")
