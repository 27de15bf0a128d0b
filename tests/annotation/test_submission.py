import pytest

from annotation.handout.shown import Answer, shown_outputs
from annotation.handout.submission import Outcome
from annotation.models import NATURALNESS, QUALITY, Assignment, CampaignCriterion, Judgment
from tests.factories import (
    make_annotator,
    make_assignment,
    make_campaign,
    make_hit,
    make_item,
    make_output,
    make_system,
)
from tests.handout import submit

pytestmark = pytest.mark.django_db


def hit_with_texts(*texts, criterion=QUALITY, **campaign_fields):
    campaign = make_campaign(min_seconds_per_hit=0, **campaign_fields)
    item = make_item(campaign)
    outputs = [make_output(item, make_system(campaign), text=text) for text in texts]
    hit = make_hit(outputs, criterion=criterion)
    return hit, campaign.criteria.get(name=criterion)


def test_shown_outputs_merges_identical_texts_and_letters_the_rest():
    hit, _ = hit_with_texts("Same text.", "Other.", "Same  text.\n", "Third.")
    shown = shown_outputs(hit)
    assert [(s.key, s.label, len(s.slots)) for s in shown] == [
        (1, "A", 2),
        (2, "B", 1),
        (4, "C", 1),
    ]
    assert [slot.position for slot in shown[0].slots] == [1, 3]


def test_submit_gives_identical_outputs_equal_judgments():
    hit, task = hit_with_texts("Same.", "Same.", "Other.")
    assignment = make_assignment(hit)
    answers = {1: Answer(70, misses_information=True), 3: Answer(20)}
    assert submit(assignment, task, answers, "k") == Outcome.SAVED
    scores = list(
        Judgment.objects.filter(assignment=assignment)
        .order_by("slot__position")
        .values_list("score", "misses_information")
    )
    assert scores == [(70, True), (70, True), (20, False)]
    assignment.refresh_from_db()
    assert assignment.flag == Assignment.Flag.NONE


def test_submit_naturalness_saves_no_coverage():
    hit, task = hit_with_texts("One.", "Two.", criterion=NATURALNESS)
    assignment = make_assignment(hit)
    answers = {1: Answer(5, reflects_perfectly=True), 2: Answer(6, adds_information=True)}
    submit(assignment, task, answers, "k")
    judgments = Judgment.objects.filter(assignment=assignment)
    assert not judgments.filter(reflects_perfectly=True).exists()
    assert not judgments.filter(adds_information=True).exists()


def test_submit_twice_saves_once():
    hit, task = hit_with_texts("One.", "Two.")
    assignment = make_assignment(hit)
    answers = {1: Answer(5), 2: Answer(6)}
    assert submit(assignment, task, answers, "k1") == Outcome.SAVED
    assert submit(assignment, task, answers, "k1") == Outcome.REPEATED
    assert submit(assignment, task, {1: Answer(9), 2: Answer(9)}, "k2") == (
        Outcome.ALREADY_SUBMITTED
    )
    assert sorted(Judgment.objects.values_list("score", flat=True)) == [5, 6]


def test_submit_too_fast_is_flagged_but_kept():
    hit, task = hit_with_texts("One.", "Two.")
    task.campaign.min_seconds_per_hit = 20
    task.campaign.save()
    assignment = make_assignment(hit)
    submit(assignment, task, {1: Answer(5), 2: Answer(6)}, "k")
    assignment.refresh_from_db()
    assert assignment.flag == Assignment.Flag.TOO_FAST
    assert Judgment.objects.filter(assignment=assignment).count() == 2
    assert not Judgment.objects.counted().exists()


def test_submit_records_a_judgments_change_of_its_criterion_only():
    hit, task = hit_with_texts("One.", "Two.")
    other = hit.campaign.criteria.get(name=NATURALNESS)
    submit(make_assignment(hit), task, {1: Answer(5), 2: Answer(6)}, "k")
    task.refresh_from_db()
    other.refresh_from_db()
    assert (task.judgments_version, other.judgments_version) == (1, 0)
    assert task.judgments_changed_at is not None


def test_submit_only_adds_judgments_where_other_changes_rewrite_them():
    """judgments_rewrites moves with every change but a submission: what adds up the new
    judgments only (ranking/incremental.py) must start again after one."""
    hit, task = hit_with_texts("One.", "Two.")
    submit(make_assignment(hit), task, {1: Answer(5), 2: Answer(6)}, "k")
    task.refresh_from_db()
    assert (task.judgments_version, task.judgments_rewrites) == (1, 0)
    CampaignCriterion.objects.filter(pk=task.pk).record_judgments_change()
    task.refresh_from_db()
    assert (task.judgments_version, task.judgments_rewrites) == (2, 1)


def test_submit_repeated_records_no_second_change():
    hit, task = hit_with_texts("One.", "Two.")
    assignment = make_assignment(hit)
    submit(assignment, task, {1: Answer(5), 2: Answer(6)}, "k")
    assert submit(assignment, task, {1: Answer(5), 2: Answer(6)}, "k") == Outcome.REPEATED
    task.refresh_from_db()
    assert task.judgments_version == 1


def test_submit_expired_assignment_taken_by_another_saves_nothing():
    hit, task = hit_with_texts("One.", "Two.")
    late = make_assignment(hit, status=Assignment.Status.EXPIRED)
    make_assignment(hit, make_annotator(hit.campaign))
    assert submit(late, task, {1: Answer(5), 2: Answer(6)}, "k") == Outcome.TAKEN
    assert not Judgment.objects.exists()
