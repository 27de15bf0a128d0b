"""The annotator's pages, as the people of tests/world.py use them: every POST either submits
a form that a page showed (with its CSRF token) or, for requests no page makes, carries a
token from another page; each POST view also refuses a POST without one."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.forms import COVERAGE_MISSING
from annotation.handout.submission import Outcome
from annotation.identity import invite, invite_path, passes_checks, set_excluded
from annotation.models import (
    NATURALNESS,
    QUALITY,
    Annotator,
    Assignment,
    Campaign,
    Judgment,
    Output,
    Screening,
)
from annotation.views import BACK_TO_SUBMITTED, NEXT_PAGE, NO_MORE_PAGES, OUTCOME_MESSAGES
from nlgdata.judgments import COVERAGE_MARKS
from tests.annotation.sample_inputs import INPUTS
from tests.client import forms_on
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
from tests.world import Person

pytestmark = pytest.mark.django_db


def url(name, campaign, criterion=QUALITY, *args):
    return reverse(f"annotation:{name}", args=[campaign.slug, criterion, *args])


def configure(campaign: Campaign, **fields) -> None:
    for name, value in fields.items():
        setattr(campaign, name, value)
    campaign.save(update_fields=list(fields))


def take_hit(person: Person, campaign: Campaign, criterion=QUALITY) -> Assignment:
    """Press Start on the instructions page; return the assignment it gave."""
    response = person.submit(person.get(url("entry", campaign, criterion)))
    assignment = Assignment.objects.get(annotator=person.annotator, hit__criterion__name=criterion)
    assert response.url == hit_url(assignment)
    return assignment


def answers(assignment, scores=None, **extra):
    """Form data scoring the HIT's slots 10, 20, 30, ... (or `scores`); for quality, slots
    that `extra` gives no coverage box are ticked 'reflects the input perfectly'."""
    slots = list(assignment.hit.slots.all())
    scores = scores or [10 * (n + 1) for n in range(len(slots))]
    data = {"submission_key": "key-1"}
    data.update({f"score_{slot.position}": str(s) for slot, s in zip(slots, scores, strict=True)})
    if assignment.hit.criterion.name == QUALITY:
        marked = {name.split("_")[1] for name in extra if name.split("_")[0] in COVERAGE_MARKS}
        data.update({f"perfect_{s.position}": "on" for s in slots if str(s.position) not in marked})
    data.update(extra)
    return data


def hit_url(assignment, criterion=None):
    hit = assignment.hit
    return url("hit", hit.campaign, criterion or hit.criterion.name, assignment.pk)


def send_answers(person: Person, assignment, data, page=None, **extra):
    """Fill in the HIT page (`page`, a copy kept from earlier, or a fresh one) and submit it."""
    page = page or person.get(hit_url(assignment))
    return person.submit(page, data, action=hit_url(assignment), **extra)


# Entry -------------------------------------------------------------------------------------


def test_entry_prolific_link_creates_annotator_and_cleans_address(stranger):
    campaign = make_campaign()
    query = {"PROLIFIC_PID": "5f1a", "STUDY_ID": "s1", "SESSION_ID": "x9"}
    response = stranger.get(url("entry", campaign), query)
    assert response.status_code == 302
    assert response.url == url("entry", campaign)
    annotator = Annotator.objects.get(campaign=campaign)
    assert (annotator.source, annotator.external_id) == (Annotator.Source.PROLIFIC, "5f1a")
    assert annotator.study_data == {"study_id": "s1", "session_id": "x9"}


def test_entry_first_visit_shows_instructions_with_worked_example(campaign, worker):
    response = worker.get(url("entry", campaign))
    assert response.status_code == 200
    page = response.content.decode()
    assert "A worked example" in page
    assert "Burger King" in page
    # Not "above the sentences": on a wide screen the standard stands beside them.
    assert "Each page also shows a <strong>standard</strong> sentence" in page
    start = reverse("annotation:start", args=[campaign.slug, "quality"])
    assert [(form.method, form.action) for form in forms_on(response)] == [("post", start)]


def test_entry_returning_worker_in_another_browser_is_the_same_annotator(campaign, worker):
    assignment = take_hit(worker, campaign)
    other_browser = Person()
    assert other_browser.enter(campaign, pid="worker-1") == worker.annotator
    response = other_browser.get(url("entry", campaign))
    assert Annotator.objects.filter(campaign=campaign).count() == 1
    assert response.status_code == 302
    assert response.url == hit_url(assignment)


def test_entry_mturk_link_creates_annotator(stranger):
    campaign = make_campaign(accepts_mturk=True)
    query = {"workerId": "A1B2", "assignmentId": "3XY", "hitId": "H1"}
    stranger.get(url("entry", campaign), query)
    annotator = Annotator.objects.get(campaign=campaign)
    assert (annotator.source, annotator.external_id) == (Annotator.Source.MTURK, "A1B2")
    assert annotator.study_data == {"assignment_id": "3XY", "hit_id": "H1"}


def test_entry_mturk_preview_shows_instructions_without_annotator(stranger):
    campaign = make_campaign()
    preview = {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}
    response = stranger.get(url("entry", campaign), preview)
    assert response.status_code == 200
    assert "Accept the HIT to start" in response.content.decode()
    assert forms_on(response) == []  # no Start button before the HIT is accepted
    assert not Annotator.objects.exists()


def test_entry_invitation_link_recognises_named_annotator(stranger):
    campaign = make_campaign()
    annotator = invite(campaign, "Ada Lovelace")
    response = stranger.get(invite_path(annotator, NATURALNESS))
    assert response.status_code == 302
    assert stranger.get(response.url).status_code == 200
    assert stranger.session["annotators"] == {str(campaign.pk): annotator.pk}
    assert Annotator.objects.count() == 1


def test_entry_unknown_invitation_is_404(stranger):
    campaign = make_campaign()
    other = invite(make_campaign(), "Elsewhere")
    response = stranger.get(url("entry", campaign), {"token": other.token})
    assert response.status_code == 404
    assert "annotators" not in stranger.session


@pytest.mark.parametrize("outsider", ["stranger", "non_staff"])
def test_entry_without_link_asks_for_it(request, outsider):
    campaign = make_campaign()
    response = request.getfixturevalue(outsider).get(url("entry", campaign))
    assert response.status_code == 403
    assert "open this task from your link" in response.content.decode()
    assert not Annotator.objects.exists()


def test_entry_bad_parameter_is_refused(stranger):
    campaign = make_campaign()
    response = stranger.get(url("entry", campaign), {"PROLIFIC_PID": "<script>x</script>"})
    assert response.status_code == 400
    assert b"<script>x" not in response.content
    assert not Annotator.objects.exists()


def test_entry_draft_campaign_or_unknown_criterion_is_404(stranger):
    draft = make_campaign(status=Campaign.Status.DRAFT)
    assert stranger.get(url("entry", draft), {"PROLIFIC_PID": "p"}).status_code == 404
    assert stranger.get(url("entry", make_campaign(), "fluency")).status_code == 404
    assert not Annotator.objects.exists()


def test_entry_not_yet_open_study_says_so_and_shows_the_way_back_to_prolific(stranger):
    draft = make_campaign(status=Campaign.Status.DRAFT)
    response = stranger.get(url("entry", draft), {"PROLIFIC_PID": "early", "STUDY_ID": "s"})
    assert response.status_code == 404
    page = response.content.decode()
    assert "This study is not open yet" in page
    assert 'id="prolific-home" href="https://app.prolific.com/"' in page
    assert not Annotator.objects.exists()


def test_entry_not_yet_open_study_without_prolific_shows_no_prolific_link(stranger):
    draft = make_campaign(status=Campaign.Status.DRAFT)
    response = stranger.get(url("entry", draft))
    assert response.status_code == 404
    assert "This study is not open yet" in response.content.decode()
    assert "prolific.com" not in response.content.decode()


@pytest.mark.parametrize("closed", ["campaign", "criterion"])
def test_entry_closed_study_turns_a_new_prolific_worker_back(stranger, campaign, closed):
    if closed == "campaign":
        configure(campaign, status=Campaign.Status.CLOSED)
    else:
        campaign.criteria.update(is_open=False)
    response = stranger.get(url("entry", campaign), {"PROLIFIC_PID": "late", "STUDY_ID": "s"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "This study is closed" in page
    assert 'id="prolific-home" href="https://app.prolific.com/"' in page
    assert not Annotator.objects.exists()


def test_entry_closed_study_lets_a_known_worker_back_to_their_code(stranger, campaign):
    configure(campaign, max_hits_per_annotator=1)
    stranger.enter(campaign, pid="came-before")
    assignment = take_hit(stranger, campaign)
    send_answers(stranger, assignment, answers(assignment))
    configure(campaign, status=Campaign.Status.CLOSED)
    other_browser = Person()
    assert other_browser.enter(campaign, pid="came-before") == stranger.annotator
    done = other_browser.get(other_browser.get(url("entry", campaign)).url)
    assert campaign.completion_code in done.content.decode()
    assert Annotator.objects.count() == 1


def test_entry_wrong_method_is_405(campaign, worker):
    assert worker.send("POST", url("entry", campaign)).status_code == 405


def test_entry_returning_worker_goes_to_open_hit(campaign, worker):
    assignment = take_hit(worker, campaign)
    response = worker.get(url("entry", campaign))
    assert response.status_code == 302
    assert response.url == hit_url(assignment)


def test_entry_closed_criterion_goes_to_done(campaign, worker):
    campaign.criteria.update(is_open=False)
    response = worker.get(url("entry", campaign))
    assert response.url == url("done", campaign)
    assert "This task is closed" in worker.get(response.url).content.decode()


# Start -------------------------------------------------------------------------------------


def test_start_gives_a_hit_and_opens_it(worker):
    campaign, systems, items = make_system_set(make_campaign(outputs_per_hit=3), 4, 2)
    worker.enter(campaign)
    response = worker.submit(worker.get(url("entry", campaign)))
    assignment = Assignment.objects.get(annotator=worker.annotator)
    assert response.url == hit_url(assignment)
    assert assignment.status == Assignment.Status.ASSIGNED
    assert assignment.expires_at > timezone.now()
    slots = assignment.hit.slots.select_related("output")
    assert len({slot.output.system_id for slot in slots}) == 3


@pytest.mark.parametrize("outsider", ["stranger", "non_staff"])
def test_start_outsider_is_404(request, campaign, outsider):
    response = request.getfixturevalue(outsider).send("POST", url("start", campaign))
    assert response.status_code == 404
    assert not Assignment.objects.exists()


def test_start_other_campaigns_worker_is_404(campaign, worker):
    elsewhere, _, _ = make_system_set()
    assert worker.send("POST", url("start", elsewhere)).status_code == 404
    assert not Assignment.objects.exists()


def test_start_wrong_method_is_405(campaign, worker):
    assert worker.get(url("start", campaign)).status_code == 405
    assert not Assignment.objects.exists()


def test_start_without_csrf_token_is_refused(campaign, worker):
    response = worker.post(url("start", campaign))
    assert response.status_code == 403
    assert not Assignment.objects.exists()


def test_start_without_work_goes_to_done(worker):
    campaign = make_campaign()
    worker.enter(campaign)
    response = worker.submit(worker.get(url("entry", campaign)))
    assert response.url == url("done", campaign)
    assert "No work for you here" in worker.get(response.url).content.decode()
    assert not Assignment.objects.exists()


# The HIT page ------------------------------------------------------------------------------


def test_hit_quality_page_shows_standard_input_outputs_and_question(campaign, worker):
    configure(campaign, standard_text="The Vaults is a pub.")
    assignment = take_hit(worker, campaign)
    response = worker.get(hit_url(assignment))
    page = response.content.decode()
    assert "The Vaults is a pub." in page
    assert 'aria-label="score 100"' in page
    assert "grammatical correctness, fluency, adequacy" in page
    assert assignment.hit.item.input_data["attributes"][0][1] in page
    for slot in assignment.hit.slots.select_related("output"):
        assert slot.output.text in page
        assert f'name="score_{slot.position}"' in page
        assert f'name="perfect_{slot.position}"' in page
    # The answers go back to the page's own address; stopping is offered after a first HIT.
    assert [form.action for form in forms_on(response)] == [hit_url(assignment)]


def test_hit_page_shows_an_empty_output_as_such_and_takes_its_score(campaign, worker):
    """A system that produced no text for the item: RankME's page says so and the
    annotator scores it like any other output."""
    Output.objects.filter(item__campaign=campaign, system__name="sys1").update(text="")
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment)).content.decode()
    assert page.count("(this system produced no text)") == 1  # 3 systems, 3 per HIT
    send_answers(worker, assignment, answers(assignment, [150, 100, 20]))
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.judgments.filter(slot__output__text="").count() == 1


def test_hit_naturalness_page_shows_no_input_and_no_coverage(campaign, worker):
    assignment = take_hit(worker, campaign, NATURALNESS)
    page = worker.get(hit_url(assignment)).content.decode()
    item = assignment.hit.item
    assert item.input_data["attributes"][0][1] not in page
    assert 'class="input' not in page
    assert "perfect_" not in page
    assert "Could the utterance have been produced by a native speaker?" in page
    assert "The Vaults is a pub near Café Adriatic." in page


def test_hit_submit_saves_judgments_per_system_and_opens_next(campaign, worker):
    assignment = take_hit(worker, campaign)
    data = answers(assignment, [150, 100, 20], adds_1="on", misses_1="on", perfect_2="on")
    response = send_answers(worker, assignment, data)
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
        3: (20, False, False, True),
    }
    following = Assignment.objects.exclude(pk=assignment.pk).get()
    assert response.url == hit_url(following)
    assert following.hit.item_id != assignment.hit.item_id


def test_hit_submission_key_comes_from_the_page(campaign, worker):
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment))
    key = next(form.hidden["submission_key"] for form in forms_on(page))
    data = answers(assignment)
    del data["submission_key"]
    send_answers(worker, assignment, data, page=page)
    assignment.refresh_from_db()
    assert assignment.submission_key == key


def test_hit_without_csrf_token_is_refused(campaign, worker):
    assignment = take_hit(worker, campaign)
    response = worker.post(hit_url(assignment), answers(assignment))
    assert response.status_code == 403
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED
    assert not Judgment.objects.exists()


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
def test_hit_bad_score_is_refused_and_keeps_what_was_typed(campaign, worker, typed, message):
    assignment = take_hit(worker, campaign)
    data = answers(assignment, [typed, 77, 33], adds_2="on")
    response = send_answers(worker, assignment, data)
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


def test_hit_coverage_perfect_with_added_is_refused(campaign, worker):
    assignment = take_hit(worker, campaign)
    data = answers(assignment, perfect_3="on", adds_3="on")
    response = send_answers(worker, assignment, data)
    assert response.status_code == 200
    assert "cannot be ticked together" in response.content.decode()
    assert not Judgment.objects.exists()


def test_hit_quality_page_marks_coverage_required(campaign, worker):
    instructions = worker.get(url("entry", campaign)).content.decode()
    assert "at least one box for every sentence" in instructions
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment)).content.decode()
    assert page.count('<fieldset class="coverage" data-required="true">') == 3
    assert page.count("(tick at least one)") == 3


def test_hit_coverage_required_refuses_a_sentence_without_a_box(campaign, worker):
    assignment = take_hit(worker, campaign)
    data = answers(assignment, adds_1="on", misses_3="on")
    del data["perfect_2"]  # nothing ticked for B
    response = send_answers(worker, assignment, data)
    assert response.status_code == 200
    page = response.content.decode()
    assert f"Sentence B: {COVERAGE_MISSING}" in page
    assert page.count(COVERAGE_MISSING) == 2  # in the summary and under sentence B
    assert 'id="id_perfect_2_error"' in page
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED
    assert not Judgment.objects.exists()
    send_answers(worker, assignment, {**data, "misses_2": "on"}, page=response)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.judgments.count() == 3
    assert assignment.judgments.filter(misses_information=True).count() == 2


def test_hit_coverage_optional_when_the_criterion_says_so(campaign, worker):
    campaign.criteria.filter(name=QUALITY).update(coverage_required=False)
    assert "at least one box" not in worker.get(url("entry", campaign)).content.decode()
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment)).content.decode()
    assert 'data-required="true"' not in page and "(tick at least one)" not in page
    data = {"submission_key": "k"} | {f"score_{n}": "50" for n in (1, 2, 3)}
    send_answers(worker, assignment, data)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.judgments.count() == 3
    assert not assignment.judgments.filter(reflects_perfectly=True).exists()


def test_hit_naturalness_ignores_coverage_fields(campaign, worker):
    assignment = take_hit(worker, campaign, NATURALNESS)
    send_answers(worker, assignment, answers(assignment, perfect_1="on", adds_1="on"))
    judgments = Judgment.objects.filter(assignment=assignment)
    assert judgments.count() == 3
    assert not judgments.filter(adds_information=True).exists()
    assert not judgments.filter(reflects_perfectly=True).exists()


def test_hit_double_submission_saves_once(campaign, worker):
    configure(campaign, max_hits_per_annotator=1)
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment))
    first = send_answers(worker, assignment, answers(assignment), page=page)
    again = send_answers(worker, assignment, answers(assignment), page=page)
    assert first.url == again.url == url("done", campaign)
    assert Judgment.objects.filter(assignment=assignment).count() == 3
    assert Assignment.objects.count() == 1


def test_hit_second_different_answer_keeps_the_first(campaign, worker):
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment))
    send_answers(worker, assignment, answers(assignment, [10, 20, 30]), page=page)
    data = answers(assignment, [90, 90, 90], submission_key="key-2")
    response = send_answers(worker, assignment, data, page=page, follow=True)
    assert "the answers sent first were kept" in response.content.decode()
    scores = sorted(Judgment.objects.filter(assignment=assignment).values_list("score", flat=True))
    assert scores == [10, 20, 30]


def test_hit_back_button_after_submission_moves_on(campaign, worker):
    assignment = take_hit(worker, campaign)
    send_answers(worker, assignment, answers(assignment))
    response = worker.get(hit_url(assignment))
    following = Assignment.objects.exclude(pk=assignment.pk).get()
    assert response.url == hit_url(following)
    page = worker.get(response.url).content.decode()
    assert f"{BACK_TO_SUBMITTED} {NEXT_PAGE}" in page
    assert Judgment.objects.filter(assignment=assignment).count() == 3


def test_hit_back_then_resubmit_says_so_and_saves_nothing_twice(campaign, worker):
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment))  # the page the Back button shows again
    send_answers(worker, assignment, answers(assignment, [10, 20, 30]), page=page)
    following = Assignment.objects.exclude(pk=assignment.pk).get()
    # The same page, its answers changed after going back, sent again.
    again = answers(assignment, [99, 99, 99])
    response = send_answers(worker, assignment, again, page=page, follow=True)
    assert response.redirect_chain == [(hit_url(following), 302)]
    text = response.content.decode()
    assert f"{OUTCOME_MESSAGES[Outcome.REPEATED]} {NEXT_PAGE}" in text
    assert "Sentence A" in text  # the next HIT's page, not an error
    scores = sorted(assignment.judgments.values_list("score", flat=True))
    assert scores == [10, 20, 30]
    assert Judgment.objects.count() == 3
    assert Assignment.objects.count() == 2
    following.refresh_from_db()
    assert following.status == Assignment.Status.ASSIGNED
    assert not following.judgments.exists()


def test_hit_back_then_resubmit_of_the_last_page_goes_to_the_code(campaign, worker):
    configure(campaign, max_hits_per_annotator=1)
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment))
    send_answers(worker, assignment, answers(assignment), page=page)
    response = send_answers(worker, assignment, answers(assignment), page=page, follow=True)
    assert response.redirect_chain == [(url("done", campaign), 302)]
    text = response.content.decode()
    assert f"{OUTCOME_MESSAGES[Outcome.REPEATED]} {NO_MORE_PAGES}" in text
    assert campaign.completion_code in text
    assert Judgment.objects.filter(assignment=assignment).count() == 3
    assert Assignment.objects.count() == 1


@pytest.mark.parametrize("outsider", ["other_worker", "stranger", "non_staff"])
def test_hit_outsider_cannot_read_or_submit(request, campaign, worker, outsider):
    assignment = take_hit(worker, campaign)
    someone = request.getfixturevalue(outsider)
    assert someone.get(hit_url(assignment)).status_code == 404
    assert someone.send("POST", hit_url(assignment), answers(assignment)).status_code == 404
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED
    assert not Judgment.objects.exists()


def test_hit_of_the_other_criterion_url_is_404(campaign, worker):
    assignment = take_hit(worker, campaign)
    other = url("hit", campaign, NATURALNESS, assignment.pk)
    assert worker.get(other).status_code == 404


def test_hit_wrong_method_is_405(campaign, worker):
    assignment = take_hit(worker, campaign)
    assert worker.send("PUT", hit_url(assignment)).status_code == 405
    assert worker.send("DELETE", hit_url(assignment)).status_code == 405
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED


def test_hit_too_fast_is_flagged_and_not_counted(campaign, worker):
    configure(campaign, min_seconds_per_hit=20)
    assignment = take_hit(worker, campaign)
    send_answers(worker, assignment, answers(assignment))
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.flag == Assignment.Flag.TOO_FAST
    assert Judgment.objects.filter(assignment=assignment).count() == 3
    assert not Judgment.objects.counted().exists()


def test_hit_too_fast_warns_on_the_next_page_before_the_code_fails(campaign, worker):
    configure(campaign, min_seconds_per_hit=20, max_hits_per_annotator=3)
    first = take_hit(worker, campaign)
    response = send_answers(worker, first, answers(first))
    second = Assignment.objects.exclude(pk=first.pk).get()
    assert response.url == hit_url(second)
    page = worker.get(response.url).content.decode()
    assert 'class="too-fast warning"' in page
    assert "sooner than the 20 seconds" in page and "If 50% or more" in page
    assert "flagged" in page
    first.refresh_from_db()
    assert first.flag == Assignment.Flag.TOO_FAST
    # Said once: the page read again (a reload) does not repeat it.
    assert "too-fast warning" not in worker.get(hit_url(second)).content.decode()


def test_hit_slow_enough_gets_no_speed_warning(campaign, worker):
    configure(campaign, min_seconds_per_hit=20, max_hits_per_annotator=3)
    first = take_hit(worker, campaign)
    page = worker.get(hit_url(first))
    Assignment.objects.filter(pk=first.pk).update(started_at=timezone.now() - timedelta(seconds=21))
    response = send_answers(worker, first, answers(first), page=page)
    assert "too-fast warning" not in worker.get(response.url).content.decode()
    first.refresh_from_db()
    assert first.flag == Assignment.Flag.NONE


def test_hit_slow_enough_is_not_flagged(campaign, worker):
    configure(campaign, min_seconds_per_hit=20)
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment))
    Assignment.objects.filter(pk=assignment.pk).update(
        started_at=timezone.now() - timedelta(seconds=21)
    )
    send_answers(worker, assignment, answers(assignment), page=page)
    assignment.refresh_from_db()
    assert assignment.flag == Assignment.Flag.NONE
    assert Judgment.objects.counted().count() == 3


def test_hit_limit_ends_at_completion(campaign, worker):
    configure(campaign, max_hits_per_annotator=2)
    instructions = worker.get(url("entry", campaign))
    first = take_hit(worker, campaign)
    second_url = send_answers(worker, first, answers(first)).url
    second = Assignment.objects.exclude(pk=first.pk).get()
    assert second_url == hit_url(second)
    response = send_answers(worker, second, answers(second))
    assert response.url == url("done", campaign)
    # The Start button of the instructions, kept open in another tab, leads nowhere new.
    assert worker.submit(instructions).url == url("done", campaign)
    assert worker.get(url("entry", campaign)).url == url("done", campaign)
    assert Assignment.objects.count() == 2


def test_hit_submission_records_a_judgments_change_in_its_transaction(campaign, worker):
    assignment = take_hit(worker, campaign)
    task = campaign.criteria.get(name="quality")
    before = task.judgments_version
    send_answers(worker, assignment, answers(assignment))
    task.refresh_from_db()
    assert task.judgments_version == before + 1
    assert Judgment.objects.filter(assignment=assignment).exists()


def test_hit_identical_outputs_are_shown_once_and_scored_alike(worker):
    campaign = make_campaign(outputs_per_hit=3, min_seconds_per_hit=0)
    item = make_item(campaign)
    outputs = [
        make_output(item, make_system(campaign), text="The pub is by the river."),
        make_output(item, make_system(campaign), text="The pub is  by the river.\n"),
        make_output(item, make_system(campaign), text="A different sentence."),
    ]
    assignment = make_assignment(make_hit(outputs), worker.enter(campaign))
    response = worker.get(hit_url(assignment))
    page = response.content.decode()
    assert page.count('class="utterance"') == 3  # the standard and two sentences
    assert 'name="score_1"' in page and 'name="score_3"' in page
    assert 'name="score_2"' not in page
    data = {"submission_key": "k", "score_1": "80", "score_3": "40", "misses_1": "on"}
    data["perfect_3"] = "on"
    send_answers(worker, assignment, data, page=response)
    saved = {
        j.slot.output_id: (j.score, j.misses_information)
        for j in Judgment.objects.filter(assignment=assignment).select_related("slot")
    }
    assert saved == {
        outputs[0].pk: (80, True),
        outputs[1].pk: (80, True),
        outputs[2].pk: (40, False),
    }


def test_hit_expired_but_still_free_is_saved(campaign, worker):
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment))
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.EXPIRED)
    send_answers(worker, assignment, answers(assignment), page=page)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert Judgment.objects.filter(assignment=assignment).count() == 3


def test_hit_expired_and_taken_by_another_is_not_saved(campaign, worker):
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment))
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.EXPIRED)
    other = make_assignment(assignment.hit, make_annotator(campaign))
    response = send_answers(worker, assignment, answers(assignment), page=page, follow=True)
    assert "given to someone else" in response.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.EXPIRED
    assert not Judgment.objects.filter(assignment=assignment).exists()
    assert Assignment.objects.get(pk=other.pk).status == Assignment.Status.ASSIGNED


def test_hit_expired_page_gives_a_new_hit(campaign, worker):
    assignment = take_hit(worker, campaign)
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.EXPIRED)
    response = worker.get(hit_url(assignment))
    following = Assignment.objects.exclude(pk=assignment.pk).get()
    assert response.url == hit_url(following)


def test_hit_html_in_outputs_and_inputs_is_shown_as_text(worker):
    campaign = make_campaign(outputs_per_hit=2)
    attack = "<script>alert('x')</script>"
    item = make_item(campaign, input_data={"attributes": [["name", attack]]})
    outputs = [make_output(item, text=f"Nice {attack} place."), make_output(item)]
    assignment = make_assignment(make_hit(outputs), worker.enter(campaign))
    page = worker.get(hit_url(assignment)).content.decode()
    assert "<script>alert" not in page
    assert page.count("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;") == 2


# Finish and completion ---------------------------------------------------------------------


def test_finish_returns_open_hit_to_pool_and_shows_code(campaign, worker):
    first = take_hit(worker, campaign)
    send_answers(worker, first, answers(first))
    second = Assignment.objects.exclude(pk=first.pk).get()
    page = worker.get(hit_url(second))
    response = worker.submit(page, action=url("finish", campaign))
    assert response.url == url("done", campaign)
    second.refresh_from_db()
    assert second.status == Assignment.Status.EXPIRED
    page = worker.get(response.url).content.decode()
    assert campaign.completion_code in page
    assert f"https://app.prolific.com/submissions/complete?cc={campaign.completion_code}" in page


PROLIFIC_DONE = "https://app.prolific.com/submissions/complete?cc="


def finish_visit(worker, campaign, close_others: bool = True) -> str:
    """Submit one HIT and finish; the completion page, with nothing left to do there."""
    assignment = take_hit(worker, campaign)
    send_answers(worker, assignment, answers(assignment))
    if close_others:
        campaign.criteria.exclude(name=QUALITY).update(is_open=False)
    following = Assignment.objects.filter(annotator=worker.annotator, status="assigned").first()
    if following is not None:
        worker.submit(worker.get(hit_url(following)), action=url("finish", campaign))
    return worker.get(url("done", campaign)).content.decode()


def test_done_gives_a_careful_worker_the_pass_code_and_takes_them_back(campaign, worker):
    page = finish_visit(worker, campaign)
    assert campaign.completion_code in page and campaign.failed_completion_code not in page
    assert f'content="10;url={PROLIFIC_DONE}{campaign.completion_code}"' in page


def test_done_gives_the_failed_code_when_most_hits_were_flagged(stranger):
    campaign = make_campaign(outputs_per_hit=3, min_seconds_per_hit=3600)
    make_system_set(campaign, systems=3, items=4)
    stranger.enter(campaign, pid="too-quick")
    page = finish_visit(stranger, campaign)
    assert Assignment.objects.get(status="submitted").flag == "too_fast"
    assert campaign.failed_completion_code in page and campaign.completion_code not in page
    assert f'content="10;url={PROLIFIC_DONE}{campaign.failed_completion_code}"' in page


def test_done_gives_the_failed_code_to_an_excluded_annotator(campaign, worker):
    assignment = take_hit(worker, campaign)
    send_answers(worker, assignment, answers(assignment))
    set_excluded(worker.annotator, True)
    page = worker.get(url("done", campaign)).content.decode()
    assert campaign.failed_completion_code in page and campaign.completion_code not in page


def test_finish_wrong_method_is_405(campaign, worker):
    assignment = take_hit(worker, campaign)
    assert worker.get(url("finish", campaign)).status_code == 405
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED


@pytest.mark.parametrize("outsider", ["stranger", "non_staff"])
def test_finish_outsider_is_404(request, campaign, worker, outsider):
    assignment = take_hit(worker, campaign)
    response = request.getfixturevalue(outsider).send("POST", url("finish", campaign))
    assert response.status_code == 404
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED


def test_finish_without_csrf_token_is_refused(campaign, worker):
    assignment = take_hit(worker, campaign)
    assert worker.post(url("finish", campaign)).status_code == 403
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED


def test_done_without_submitted_work_shows_no_code(campaign, worker):
    assignment = take_hit(worker, campaign)
    page = worker.get(url("done", campaign)).content.decode()
    assert campaign.completion_code not in page
    assert hit_url(assignment) in page


def test_done_has_one_way_out_and_offers_no_other_criterion_by_default(campaign, worker):
    page = finish_visit(worker, campaign, close_others=False)
    assert url("entry", campaign, NATURALNESS) not in page
    assert page.count('href="https://') == 1  # the way back to Prolific, with the code
    assert f'href="{PROLIFIC_DONE}{campaign.completion_code}"' in page
    assert f'content="10;url={PROLIFIC_DONE}{campaign.completion_code}"' in page
    assert 'id="failure"' not in page


def test_done_offers_the_organisers_follow_up_study_as_an_option(campaign, worker):
    follow_up = "https://app.prolific.com/studies/other"
    campaign.criteria.filter(name=QUALITY).update(follow_up_url=follow_up)
    page = finish_visit(worker, campaign, close_others=False)
    assert f'id="follow-up-link" href="{follow_up}"' in page
    assert "Optional" in page
    assert f'href="{PROLIFIC_DONE}{campaign.completion_code}"' in page
    assert "http-equiv" not in page  # time to choose: the page does not leave by itself


def make_too_fast(worker, campaign):
    configure(campaign, min_seconds_per_hit=3600)


def make_excluded(worker, campaign):
    set_excluded(worker.annotator, True)


def make_inattentive(worker, campaign):
    Annotator.objects.filter(pk=worker.annotator.pk).update(failed_attention_at=timezone.now())
    set_excluded(worker.annotator, True)


def make_screened_out(worker, campaign):
    Screening.objects.create(
        annotator=worker.annotator,
        criterion=campaign.criteria.get(name=NATURALNESS),
        attempts=Screening.MAX_ATTEMPTS,
    )


@pytest.mark.parametrize(
    "make_fail, reason",
    [
        (make_too_fast, "Too fast"),
        (make_excluded, "Excluded"),
        (make_inattentive, "Failed attention checks"),
        (make_screened_out, "Failed comprehension check"),
    ],
)
def test_done_tells_a_failed_worker_why(campaign, worker, make_fail, reason):
    follow_up = "https://app.prolific.com/studies/other"
    campaign.criteria.update(follow_up_url=follow_up)
    assignment = take_hit(worker, campaign)
    make_fail(worker, campaign)
    send_answers(worker, assignment, answers(assignment))
    following = Assignment.objects.filter(annotator=worker.annotator, status="assigned").first()
    if following is not None:  # the excluded get no next HIT
        worker.submit(worker.get(hit_url(following)), action=url("finish", campaign))
    page = worker.get(url("done", campaign)).content.decode()
    assert f'<p id="failure-reason">{reason}' in page
    assert campaign.failed_completion_code in page and campaign.completion_code not in page
    assert f'content="10;url={PROLIFIC_DONE}{campaign.failed_completion_code}"' in page
    assert follow_up not in page
    assert url("entry", campaign, NATURALNESS) not in page
    assert not passes_checks(Annotator.objects.get(pk=worker.annotator.pk))


def test_entry_of_another_criterion_sends_a_failed_worker_to_the_reason(campaign, worker):
    configure(campaign, min_seconds_per_hit=3600)
    finish_visit(worker, campaign, close_others=False)
    response = worker.get(url("entry", campaign, NATURALNESS))
    assert response.url == url("done", campaign, NATURALNESS)
    page = worker.get(response.url).content.decode()
    assert '<p id="failure-reason">Too fast' in page
    assert campaign.failed_completion_code in page
    assert not Assignment.objects.filter(hit__criterion__name=NATURALNESS).exists()


def test_hit_of_an_excluded_worker_is_saved_and_leads_to_the_reason(campaign, worker):
    assignment = take_hit(worker, campaign)
    set_excluded(worker.annotator, True)
    response = send_answers(worker, assignment, answers(assignment))
    assert response.url == url("done", campaign)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert Assignment.objects.filter(annotator=worker.annotator).count() == 1  # no next HIT
    assert not Judgment.objects.counted().exists()
    page = worker.get(response.url).content.decode()
    assert '<p id="failure-reason">Excluded' in page


def test_done_tells_an_invited_annotator_what_the_code_is_for(stranger):
    campaign = make_campaign(outputs_per_hit=2, min_seconds_per_hit=0)
    make_system_set(campaign)
    stranger.get(invite_path(invite(campaign, "Ada"), QUALITY))
    stranger.submit(stranger.get(url("entry", campaign)))
    assignment = Assignment.objects.get()
    send_answers(stranger, assignment, answers(assignment, [50, 60]))
    page = stranger.get(url("done", campaign)).content.decode()
    assert campaign.completion_code in page
    assert "crowdsourcing platform" not in page and "prolific.com" not in page
    assert "you can close this page" in page and "organisers asked you" in page


def test_done_mturk_worker_gets_code_without_prolific_link(stranger):
    campaign = make_campaign(outputs_per_hit=2, min_seconds_per_hit=0, accepts_mturk=True)
    make_system_set(campaign)
    query = {"workerId": "W1", "assignmentId": "A", "hitId": "H"}
    stranger.get(url("entry", campaign), query)
    stranger.submit(stranger.get(url("entry", campaign)))
    assignment = Assignment.objects.get()
    send_answers(stranger, assignment, answers(assignment, [50, 60]))
    page = stranger.get(url("done", campaign)).content.decode()
    assert campaign.completion_code in page
    assert "prolific.com" not in page


@pytest.mark.parametrize("outsider", ["stranger", "non_staff"])
def test_done_outsider_is_404(request, campaign, outsider):
    assert request.getfixturevalue(outsider).get(url("done", campaign)).status_code == 404


def test_done_wrong_method_is_405(campaign, worker):
    assert worker.send("POST", url("done", campaign)).status_code == 405


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_hit_every_input_kind_shows_for_quality_and_never_for_naturalness(worker, kind):
    data, fragments = INPUTS[kind]
    campaign = make_campaign(outputs_per_hit=2, standard_text="Standard.")
    item = make_item(campaign, input_kind=kind, input_data=data, input_key=kind)
    outputs = [make_output(item, text="First."), make_output(item, text="Second.")]
    annotator = worker.enter(campaign)
    for criterion in (QUALITY, NATURALNESS):
        assignment = make_assignment(make_hit(outputs, criterion=criterion), annotator)
        page = worker.get(hit_url(assignment)).content.decode()
        shown = [fragment in page for fragment in fragments]
        if criterion == QUALITY:
            assert f'class="input input-{kind}"' in page
            assert all(shown)
        else:
            assert f'class="input input-{kind}"' not in page
            assert not any(shown)
