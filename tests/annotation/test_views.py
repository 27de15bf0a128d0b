from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.identity import invite, invite_path
from annotation.models import Annotator, Assignment, Campaign, Criterion, Judgment
from tests.annotation.sample_inputs import INPUTS
from tests.client import HttpsClient
from tests.factories import (
    make_annotator,
    make_assignment,
    make_campaign,
    make_hit,
    make_item,
    make_output,
    make_system,
    make_system_set,
)

pytestmark = pytest.mark.django_db


def url(name, campaign, criterion=Criterion.QUALITY, *args):
    return reverse(f"annotation:{name}", args=[campaign.slug, criterion, *args])


def enter(client, campaign, criterion=Criterion.QUALITY, pid="pid-1"):
    """Arrive through the Prolific link; return the annotator the session now holds."""
    query = {"PROLIFIC_PID": pid, "STUDY_ID": "study-1", "SESSION_ID": "session-1"}
    response = client.get(url("entry", campaign, criterion), query)
    assert response.status_code == 302
    return Annotator.objects.get(campaign=campaign, external_id=pid)


def open_task(client, criterion=Criterion.QUALITY, pid="pid-1", **campaign_fields):
    """A campaign of 3 systems x 4 items with k = 3; the worker has taken a HIT."""
    fields = {"outputs_per_hit": 3, "min_seconds_per_hit": 0, **campaign_fields}
    campaign, systems, items = make_system_set(make_campaign(**fields), systems=3, items=4)
    annotator = enter(client, campaign, criterion, pid)
    client.post(url("start", campaign, criterion))
    assignment = Assignment.objects.get(annotator=annotator, hit__criterion=criterion)
    return campaign, assignment


def answers(assignment, scores=None, **extra):
    """POST data scoring the HIT's slots 10, 20, 30, ... (or `scores`)."""
    slots = list(assignment.hit.slots.all())
    scores = scores or [10 * (n + 1) for n in range(len(slots))]
    data = {"submission_key": "key-1"}
    data.update({f"score_{slot.position}": str(s) for slot, s in zip(slots, scores, strict=True)})
    data.update(extra)
    return data


def hit_url(assignment, criterion=None):
    hit = assignment.hit
    return url("hit", hit.campaign, criterion or hit.criterion, assignment.pk)


# Entry -------------------------------------------------------------------------------------


def test_entry_prolific_link_creates_annotator_and_cleans_address(client):
    campaign = make_campaign()
    query = {"PROLIFIC_PID": "5f1a", "STUDY_ID": "s1", "SESSION_ID": "x9"}
    response = client.get(url("entry", campaign), query)
    assert response.status_code == 302
    assert response.url == url("entry", campaign)
    annotator = Annotator.objects.get(campaign=campaign)
    assert (annotator.source, annotator.external_id) == (Annotator.Source.PROLIFIC, "5f1a")
    assert annotator.study_data == {"study_id": "s1", "session_id": "x9"}


def test_entry_first_visit_shows_instructions_with_worked_example(client):
    campaign = make_campaign()
    enter(client, campaign)
    response = client.get(url("entry", campaign))
    assert response.status_code == 200
    page = response.content.decode()
    assert "A worked example" in page
    assert "Burger King" in page
    assert reverse("annotation:start", args=[campaign.slug, "quality"]) in page


def test_entry_returning_worker_in_another_browser_is_the_same_annotator(client, django_user_model):

    campaign, assignment = open_task(client, pid="same")
    other_browser = HttpsClient()
    enter(other_browser, campaign, pid="same")
    response = other_browser.get(url("entry", campaign))
    assert Annotator.objects.filter(campaign=campaign).count() == 1
    assert response.status_code == 302
    assert response.url == hit_url(assignment)


def test_entry_mturk_link_creates_annotator(client):
    campaign = make_campaign()
    query = {"workerId": "A1B2", "assignmentId": "3XY", "hitId": "H1"}
    client.get(url("entry", campaign), query)
    annotator = Annotator.objects.get(campaign=campaign)
    assert (annotator.source, annotator.external_id) == (Annotator.Source.MTURK, "A1B2")
    assert annotator.study_data == {"assignment_id": "3XY", "hit_id": "H1"}


def test_entry_mturk_preview_shows_instructions_without_annotator(client):
    campaign = make_campaign()
    response = client.get(url("entry", campaign), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    assert response.status_code == 200
    assert "Accept the HIT to start" in response.content.decode()
    assert not Annotator.objects.exists()


def test_entry_invitation_link_recognises_named_annotator(client):
    campaign = make_campaign()
    annotator = invite(campaign, "Ada Lovelace")
    response = client.get(invite_path(annotator, Criterion.NATURALNESS))
    assert response.status_code == 302
    assert client.get(response.url).status_code == 200
    assert client.session["annotators"] == {str(campaign.pk): annotator.pk}
    assert Annotator.objects.count() == 1


def test_entry_unknown_invitation_is_404(client):
    campaign = make_campaign()
    other = invite(make_campaign(), "Elsewhere")
    response = client.get(url("entry", campaign), {"token": other.token})
    assert response.status_code == 404
    assert "annotators" not in client.session


def test_entry_without_link_asks_for_it(client):
    campaign = make_campaign()
    response = client.get(url("entry", campaign))
    assert response.status_code == 403
    assert "open this task from your link" in response.content.decode()
    assert not Annotator.objects.exists()


def test_entry_bad_parameter_is_refused(client):
    campaign = make_campaign()
    response = client.get(url("entry", campaign), {"PROLIFIC_PID": "<script>x</script>"})
    assert response.status_code == 400
    assert b"<script>x" not in response.content
    assert not Annotator.objects.exists()


def test_entry_draft_campaign_or_unknown_criterion_is_404(client):
    draft = make_campaign(status=Campaign.Status.DRAFT)
    assert client.get(url("entry", draft), {"PROLIFIC_PID": "p"}).status_code == 404
    assert client.get(url("entry", make_campaign(), "fluency")).status_code == 404
    assert not Annotator.objects.exists()


def test_entry_wrong_method_is_405(client):
    assert client.post(url("entry", make_campaign())).status_code == 405


def test_entry_returning_worker_goes_to_open_hit(client):
    campaign, assignment = open_task(client)
    response = client.get(url("entry", campaign))
    assert response.status_code == 302
    assert response.url == hit_url(assignment)


def test_entry_closed_criterion_goes_to_done(client):
    campaign = make_campaign()
    campaign.criteria.update(is_open=False)
    enter(client, campaign)
    response = client.get(url("entry", campaign))
    assert response.url == url("done", campaign)
    assert "This task is closed" in client.get(response.url).content.decode()


# Start -------------------------------------------------------------------------------------


def test_start_gives_a_hit_and_opens_it(client):
    campaign, systems, items = make_system_set(make_campaign(outputs_per_hit=3), 4, 2)
    annotator = enter(client, campaign)
    response = client.post(url("start", campaign))
    assignment = Assignment.objects.get(annotator=annotator)
    assert response.url == hit_url(assignment)
    assert assignment.status == Assignment.Status.ASSIGNED
    assert assignment.expires_at > timezone.now()
    slots = assignment.hit.slots.select_related("output")
    assert len({slot.output.system_id for slot in slots}) == 3


def test_start_outsider_is_404(client):
    campaign, _, _ = make_system_set()
    assert client.post(url("start", campaign)).status_code == 404
    assert not Assignment.objects.exists()


def test_start_wrong_method_is_405(client):
    campaign, _, _ = make_system_set()
    enter(client, campaign)
    assert client.get(url("start", campaign)).status_code == 405
    assert not Assignment.objects.exists()


def test_start_without_work_goes_to_done(client):
    campaign = make_campaign()
    enter(client, campaign)
    response = client.post(url("start", campaign))
    assert response.url == url("done", campaign)
    assert "No work for you here" in client.get(response.url).content.decode()
    assert not Assignment.objects.exists()


# The HIT page ------------------------------------------------------------------------------


def test_hit_quality_page_shows_standard_input_outputs_and_question(client):
    campaign, assignment = open_task(client, standard_text="The Vaults is a pub.")
    page = client.get(hit_url(assignment)).content.decode()
    assert "The Vaults is a pub." in page
    assert 'aria-label="score 100"' in page
    assert "grammatical correctness, fluency, adequacy" in page
    assert assignment.hit.item.input_data["attributes"][0][1] in page
    for slot in assignment.hit.slots.select_related("output"):
        assert slot.output.text in page
        assert f'name="score_{slot.position}"' in page
        assert f'name="perfect_{slot.position}"' in page


def test_hit_naturalness_page_shows_no_input_and_no_coverage(client):
    campaign, assignment = open_task(client, criterion=Criterion.NATURALNESS)
    page = client.get(hit_url(assignment)).content.decode()
    item = assignment.hit.item
    assert item.input_data["attributes"][0][1] not in page
    assert 'class="input' not in page
    assert "perfect_" not in page
    assert "Could the utterance have been produced by a native speaker?" in page
    assert "The Vaults is a pub near Café Adriatic." in page


def test_hit_submit_saves_judgments_per_system_and_opens_next(client):
    campaign, assignment = open_task(client)
    data = answers(assignment, [150, 100, 20], adds_1="on", misses_1="on", perfect_2="on")
    response = client.post(hit_url(assignment), data)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.submission_key == "key-1"
    saved = {
        j.slot.position: (j.score, j.adds_information, j.misses_information, j.reflects_perfectly)
        for j in assignment.judgments.select_related("slot")
    }
    assert saved == {
        1: (150, True, True, False),
        2: (100, False, False, True),
        3: (20, False, False, False),
    }
    following = Assignment.objects.exclude(pk=assignment.pk).get()
    assert response.url == hit_url(following)
    assert following.hit.item_id != assignment.hit.item_id


@pytest.mark.parametrize(
    "typed, message",
    [
        ("", "Give this sentence a score"),
        ("abc", "Enter a number"),
        ("0", "Scores must be above 0"),
        ("-20", "Scores must be positive"),
        ("12.5", "Use whole numbers only"),
        ("1234567", "at most 6 digits"),
        ("0" * 5000 + "5", "at most 6 digits"),  # past int()'s 4300-digit limit
    ],
)
def test_hit_bad_score_is_refused_and_keeps_what_was_typed(client, typed, message):
    campaign, assignment = open_task(client)
    data = answers(assignment, [typed, 77, 33], adds_2="on")
    response = client.post(hit_url(assignment), data)
    assert response.status_code == 200
    page = response.content.decode()
    assert message in page
    assert 'value="77"' in page and 'value="33"' in page
    assert f'value="{typed}"' in page or not typed
    assert 'name="adds_2" id="id_adds_2" checked' in page
    assert 'value="key-1"' in page
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED
    assert not Judgment.objects.exists()


def test_hit_coverage_perfect_with_added_is_refused(client):
    campaign, assignment = open_task(client)
    response = client.post(hit_url(assignment), answers(assignment, perfect_3="on", adds_3="on"))
    assert response.status_code == 200
    assert "cannot be ticked together" in response.content.decode()
    assert not Judgment.objects.exists()


def test_hit_naturalness_ignores_coverage_fields(client):
    campaign, assignment = open_task(client, criterion=Criterion.NATURALNESS)
    client.post(hit_url(assignment), answers(assignment, perfect_1="on", adds_1="on"))
    judgments = Judgment.objects.filter(assignment=assignment)
    assert judgments.count() == 3
    assert not judgments.filter(adds_information=True).exists()
    assert not judgments.filter(reflects_perfectly=True).exists()


def test_hit_double_submission_saves_once(client):
    campaign, assignment = open_task(client, max_hits_per_annotator=1)
    first = client.post(hit_url(assignment), answers(assignment))
    again = client.post(hit_url(assignment), answers(assignment))
    assert first.url == again.url == url("done", campaign)
    assert Judgment.objects.filter(assignment=assignment).count() == 3
    assert Assignment.objects.count() == 1


def test_hit_second_different_answer_keeps_the_first(client):
    campaign, assignment = open_task(client)
    client.post(hit_url(assignment), answers(assignment, [10, 20, 30]))
    data = answers(assignment, [90, 90, 90], submission_key="key-2")
    response = client.post(hit_url(assignment), data, follow=True)
    assert "the answers sent first were kept" in response.content.decode()
    scores = sorted(Judgment.objects.filter(assignment=assignment).values_list("score", flat=True))
    assert scores == [10, 20, 30]


def test_hit_back_button_after_submission_moves_on(client):
    campaign, assignment = open_task(client)
    client.post(hit_url(assignment), answers(assignment))
    response = client.get(hit_url(assignment))
    following = Assignment.objects.exclude(pk=assignment.pk).get()
    assert response.url == hit_url(following)
    assert Judgment.objects.filter(assignment=assignment).count() == 3


def test_hit_outsider_cannot_read_or_submit(client):

    campaign, assignment = open_task(client, pid="owner")
    intruder = HttpsClient()
    enter(intruder, campaign, pid="intruder")
    assert intruder.get(hit_url(assignment)).status_code == 404
    assert intruder.post(hit_url(assignment), answers(assignment)).status_code == 404
    stranger = HttpsClient()
    assert stranger.get(hit_url(assignment)).status_code == 404
    assert stranger.post(hit_url(assignment), answers(assignment)).status_code == 404
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED
    assert not Judgment.objects.exists()


def test_hit_of_the_other_criterion_url_is_404(client):
    campaign, assignment = open_task(client)
    other = url("hit", campaign, Criterion.NATURALNESS, assignment.pk)
    assert client.get(other).status_code == 404


def test_hit_wrong_method_is_405(client):
    campaign, assignment = open_task(client)
    assert client.put(hit_url(assignment)).status_code == 405
    assert client.delete(hit_url(assignment)).status_code == 405
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED


def test_hit_too_fast_is_flagged_and_not_counted(client):
    campaign, assignment = open_task(client, min_seconds_per_hit=20)
    client.post(hit_url(assignment), answers(assignment))
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.flag == Assignment.Flag.TOO_FAST
    assert Judgment.objects.filter(assignment=assignment).count() == 3
    assert not Judgment.objects.counted().exists()


def test_hit_slow_enough_is_not_flagged(client):
    campaign, assignment = open_task(client, min_seconds_per_hit=20)
    Assignment.objects.filter(pk=assignment.pk).update(
        started_at=timezone.now() - timedelta(seconds=21)
    )
    client.post(hit_url(assignment), answers(assignment))
    assignment.refresh_from_db()
    assert assignment.flag == Assignment.Flag.NONE
    assert Judgment.objects.counted().count() == 3


def test_hit_limit_ends_at_completion(client):
    campaign, first = open_task(client, max_hits_per_annotator=2)
    second_url = client.post(hit_url(first), answers(first)).url
    second = Assignment.objects.exclude(pk=first.pk).get()
    assert second_url == hit_url(second)
    response = client.post(hit_url(second), answers(second))
    assert response.url == url("done", campaign)
    assert client.post(url("start", campaign)).url == url("done", campaign)
    assert client.get(url("entry", campaign)).url == url("done", campaign)
    assert Assignment.objects.count() == 2


def test_hit_submission_records_a_judgments_change_in_its_transaction(client):
    campaign, assignment = open_task(client)
    task = campaign.criteria.get(criterion="quality")
    before = task.judgments_version
    client.post(hit_url(assignment), answers(assignment))
    task.refresh_from_db()
    assert task.judgments_version == before + 1
    assert Judgment.objects.filter(assignment=assignment).exists()


def test_hit_identical_outputs_are_shown_once_and_scored_alike(client):
    campaign = make_campaign(outputs_per_hit=3, min_seconds_per_hit=0)
    item = make_item(campaign)
    outputs = [
        make_output(item, make_system(campaign), text="The pub is by the river."),
        make_output(item, make_system(campaign), text="The pub is  by the river.\n"),
        make_output(item, make_system(campaign), text="A different sentence."),
    ]
    annotator = enter(client, campaign)
    assignment = make_assignment(make_hit(outputs), annotator)
    page = client.get(hit_url(assignment)).content.decode()
    assert page.count('class="utterance"') == 3  # the standard and two sentences
    assert 'name="score_1"' in page and 'name="score_3"' in page
    assert 'name="score_2"' not in page
    data = {"submission_key": "k", "score_1": "80", "score_3": "40", "misses_1": "on"}
    client.post(hit_url(assignment), data)
    saved = {
        j.slot.output_id: (j.score, j.misses_information)
        for j in Judgment.objects.filter(assignment=assignment).select_related("slot")
    }
    assert saved == {
        outputs[0].pk: (80, True),
        outputs[1].pk: (80, True),
        outputs[2].pk: (40, False),
    }


def test_hit_expired_but_still_free_is_saved(client):
    campaign, assignment = open_task(client)
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.EXPIRED)
    client.post(hit_url(assignment), answers(assignment))
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert Judgment.objects.filter(assignment=assignment).count() == 3


def test_hit_expired_and_taken_by_another_is_not_saved(client):
    campaign, assignment = open_task(client)
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.EXPIRED)
    other = make_assignment(assignment.hit, make_annotator(campaign))
    response = client.post(hit_url(assignment), answers(assignment), follow=True)
    assert "given to someone else" in response.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.EXPIRED
    assert not Judgment.objects.filter(assignment=assignment).exists()
    assert Assignment.objects.get(pk=other.pk).status == Assignment.Status.ASSIGNED


def test_hit_expired_page_gives_a_new_hit(client):
    campaign, assignment = open_task(client)
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.EXPIRED)
    response = client.get(hit_url(assignment))
    following = Assignment.objects.exclude(pk=assignment.pk).get()
    assert response.url == hit_url(following)


def test_hit_html_in_outputs_and_inputs_is_shown_as_text(client):
    campaign = make_campaign(outputs_per_hit=2)
    attack = "<script>alert('x')</script>"
    item = make_item(campaign, input_data={"attributes": [["name", attack]]})
    outputs = [make_output(item, text=f"Nice {attack} place."), make_output(item)]
    annotator = enter(client, campaign)
    assignment = make_assignment(make_hit(outputs), annotator)
    page = client.get(hit_url(assignment)).content.decode()
    assert "<script>alert" not in page
    assert page.count("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;") == 2


# Finish and completion ---------------------------------------------------------------------


def test_finish_returns_open_hit_to_pool_and_shows_code(client):
    campaign, first = open_task(client)
    client.post(hit_url(first), answers(first))
    second = Assignment.objects.exclude(pk=first.pk).get()
    response = client.post(url("finish", campaign))
    assert response.url == url("done", campaign)
    second.refresh_from_db()
    assert second.status == Assignment.Status.EXPIRED
    page = client.get(response.url).content.decode()
    assert campaign.completion_code in page
    assert f"https://app.prolific.com/submissions/complete?cc={campaign.completion_code}" in page


def test_finish_wrong_method_and_outsider(client):
    campaign, assignment = open_task(client)
    assert client.get(url("finish", campaign)).status_code == 405

    assert HttpsClient().post(url("finish", campaign)).status_code == 404
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED


def test_done_without_submitted_work_shows_no_code(client):
    campaign, assignment = open_task(client)
    page = client.get(url("done", campaign)).content.decode()
    assert campaign.completion_code not in page
    assert hit_url(assignment) in page


def test_done_offers_the_other_criterion(client):
    campaign, assignment = open_task(client)
    client.post(hit_url(assignment), answers(assignment))
    page = client.get(url("done", campaign)).content.decode()
    assert url("entry", campaign, Criterion.NATURALNESS) in page


def test_done_mturk_worker_gets_code_without_prolific_link(client):
    campaign = make_campaign(outputs_per_hit=2, min_seconds_per_hit=0)
    make_system_set(campaign)
    client.get(url("entry", campaign), {"workerId": "W1", "assignmentId": "A", "hitId": "H"})
    client.post(url("start", campaign))
    assignment = Assignment.objects.get()
    client.post(hit_url(assignment), answers(assignment, [50, 60]))
    page = client.get(url("done", campaign)).content.decode()
    assert campaign.completion_code in page
    assert "prolific.com" not in page


def test_done_outsider_is_404_and_wrong_method_405(client):
    campaign = make_campaign()
    assert client.get(url("done", campaign)).status_code == 404
    enter(client, campaign)
    assert client.post(url("done", campaign)).status_code == 405


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_hit_every_input_kind_shows_for_quality_and_never_for_naturalness(client, kind):
    data, fragments = INPUTS[kind]
    campaign = make_campaign(outputs_per_hit=2, standard_text="Standard.")
    item = make_item(campaign, input_kind=kind, input_data=data, input_key=kind)
    outputs = [make_output(item, text="First."), make_output(item, text="Second.")]
    annotator = enter(client, campaign)
    for criterion in (Criterion.QUALITY, Criterion.NATURALNESS):
        assignment = make_assignment(make_hit(outputs, criterion=criterion), annotator)
        page = client.get(hit_url(assignment)).content.decode()
        shown = [fragment in page for fragment in fragments]
        if criterion == Criterion.QUALITY:
            assert f'class="input input-{kind}"' in page
            assert all(shown)
        else:
            assert f'class="input input-{kind}"' not in page
            assert not any(shown)
