"""Attention checks: which HITs carry one, that it ranks nothing and counts in no load, and
the verdict that leaves a careless annotator out of rankings and gives them the failed
completion code."""

import json

import pytest

from annotation.attention import attention_summary, record_attention_verdict, record_due_verdicts
from annotation.datafiles.exporters import export
from annotation.handout.assignment import next_assignment, release
from annotation.handout.shown import Answer, shown_outputs
from annotation.identity import completion_code, set_excluded
from annotation.models import QUALITY, Annotator, Assignment, HitOutput, Judgment
from nlgdata.text import normalise
from ranking.service import load_ranking_input
from tests.annotation.test_loads import counted_from_rows
from tests.factories import make_annotator, make_campaign, make_system_set
from tests.handout import kept_loads, submit

pytestmark = pytest.mark.django_db


def checked_campaign(every=5, items=12):
    fields = {"outputs_per_hit": 3, "min_seconds_per_hit": 0, "attention_check_every": every}
    campaign, _, _ = make_system_set(make_campaign(**fields), systems=4, items=items)
    return campaign, campaign.criteria.get(name=QUALITY)


def check_slot(assignment) -> HitOutput | None:
    return assignment.hit.slots.attention_checks().first()


def work(annotator, criterion, careful: bool) -> Assignment:
    """Take a HIT and answer it: carefully (each original above its degraded copy) or by
    scoring every sentence 50."""
    assignment = next_assignment(annotator, criterion)
    answers = {}
    for n, shown in enumerate(shown_outputs(assignment.hit)):
        is_check = shown.slots[0].is_attention_check
        score = (10 if is_check else 60 + n) if careful else 50
        answers[shown.key] = Answer(score=score)
    assert submit(assignment, criterion, answers, key=f"k{assignment.pk}").value == "saved"
    return assignment


def test_the_first_hit_then_one_in_every_carries_a_degraded_copy_of_one_of_its_outputs():
    campaign, criterion = checked_campaign(every=5)
    annotator = make_annotator(campaign)
    carried = []
    for _ in range(11):
        assignment = work(annotator, criterion, careful=True)
        check = check_slot(assignment)
        carried.append(check is not None)
        if check is None:
            assert assignment.hit.slots.count() == 3
            continue
        originals = assignment.hit.slots.filter(degraded_text="")
        assert originals.count() == 3 and check.output_id in originals.values_list(
            "output", flat=True
        )
        assert normalise(check.degraded_text) != normalise(check.output.text)
        assert sorted(assignment.hit.slots.values_list("position", flat=True)) == [1, 2, 3, 4]
    assert carried == [True, False, False, False, False, True, False, False, False, False, True]


def test_no_checks_when_the_campaign_sets_none():
    campaign, criterion = checked_campaign(every=0)
    annotator = make_annotator(campaign)
    assert not any(check_slot(work(annotator, criterion, careful=True)) for _ in range(3))


def test_checks_rank_nothing_and_count_in_no_load():
    campaign, criterion = checked_campaign(every=1)
    for _ in range(3):
        annotator = make_annotator(campaign)
        work(annotator, criterion, careful=True)
        work(annotator, criterion, careful=True)
    assert HitOutput.objects.exclude(degraded_text="").count() == 6
    assert Judgment.objects.count() == 6 * 4
    assert Judgment.objects.counted().count() == 6 * 3
    ranking_input = load_ranking_input(criterion)
    assert ranking_input.judgments == 6 * 3 and ranking_input.hits == 6
    assert kept_loads(criterion) == counted_from_rows(criterion)
    assert sum(kept_loads(criterion)["systems"].values()) == 6 * 3


def test_a_careless_annotator_fails_and_is_left_out_a_careful_one_passes():
    campaign, criterion = checked_campaign(every=1)
    careful, careless = make_annotator(campaign), make_annotator(campaign)
    for _ in range(3):
        work(careful, criterion, careful=True)
        work(careless, criterion, careful=False)
    assert record_due_verdicts() == 2
    careful.refresh_from_db()
    careless.refresh_from_db()
    assert careful.attention_checks == 3 and careful.attention_p <= 0.05
    assert not careful.is_excluded and careful.failed_attention_at is None
    assert careless.attention_checks == 3 and careless.attention_p == 1.0
    assert careless.is_excluded and careless.failed_attention_at is not None
    assert completion_code(careful) == campaign.completion_code
    assert completion_code(careless) == campaign.failed_completion_code
    counted_annotators = set(
        Judgment.objects.counted().values_list("assignment__annotator", flat=True)
    )
    assert counted_annotators == {careful.pk}
    assert kept_loads(criterion) == counted_from_rows(criterion)
    summary = attention_summary(campaign)
    assert (summary.checked, summary.failed, summary.left_out) == (2, 1, 1)


def test_too_few_checks_leave_the_verdict_open():
    campaign, criterion = checked_campaign(every=1)
    careless = make_annotator(campaign)
    work(careless, criterion, careful=False)
    work(careless, criterion, careful=False)
    record_due_verdicts()
    careless.refresh_from_db()
    assert careless.attention_checks == 2 and not careless.is_excluded
    assert completion_code(careless) == campaign.completion_code


def test_a_verdict_with_no_new_check_reads_once_and_a_stricter_threshold_still_fails(
    django_assert_num_queries,
):
    campaign, criterion = checked_campaign(every=1)
    careless = make_annotator(campaign)
    work(careless, criterion, careful=False)
    work(careless, criterion, careful=False)
    assert record_attention_verdict(careless).p == 1.0
    careless.refresh_from_db()
    careless.campaign = campaign
    assert careless.attention_checks == 2 and not careless.is_excluded
    with django_assert_num_queries(1):  # its checks' scores; no test run, nothing written
        assert record_attention_verdict(careless).checks == 2
    # Two checks are too few to decide at 0.10 (the smallest p they can give is 1/6), enough
    # at 0.20: with the threshold raised, the stored p = 1.0 fails without a new check.
    campaign.attention_p_threshold = 0.20
    assert record_attention_verdict(careless).failed
    careless.refresh_from_db()
    assert careless.is_excluded and careless.failed_attention_at is not None


def test_an_organiser_who_takes_a_failed_annotator_back_is_not_overruled():
    campaign, criterion = checked_campaign(every=1)
    careless = make_annotator(campaign)
    for _ in range(3):
        work(careless, criterion, careful=False)
    record_due_verdicts()
    careless.refresh_from_db()
    assert careless.is_excluded
    set_excluded(careless, False)
    work(careless, criterion, careful=False)
    record_due_verdicts()
    careless.refresh_from_db()
    assert not careless.is_excluded and careless.attention_checks == 4
    assert careless.failed_attention_at is not None  # the verdict stays on record
    assert kept_loads(criterion) == counted_from_rows(criterion)


def test_the_sweep_reads_only_what_was_submitted_since_it_last_ran():
    campaign, criterion = checked_campaign(every=1)
    annotator = make_annotator(campaign)
    work(annotator, criterion, careful=True)
    assert record_due_verdicts() == 1
    assert record_due_verdicts() == 0  # nothing new
    work(annotator, criterion, careful=True)
    assert record_due_verdicts() == 1
    annotator.refresh_from_db()
    assert annotator.attention_checks == 2


def test_a_hit_given_out_again_keeps_its_check_and_a_due_check_is_not_skipped():
    campaign, criterion = checked_campaign(every=2, items=1)
    first = make_annotator(campaign)
    abandoned = next_assignment(first, criterion)
    assert check_slot(abandoned) is not None
    release(first, criterion)
    # A newcomer is due a check: the freed HIT, which carries one, is theirs.
    newcomer = make_annotator(campaign)
    taken = next_assignment(newcomer, criterion)
    assert taken.hit_id == abandoned.hit_id
    assert kept_loads(criterion) == counted_from_rows(criterion)
    release(newcomer, criterion)
    # One who is due a check never gets a freed HIT without one: a new HIT is made.
    campaign.attention_check_every = 0
    campaign.save()
    unchecked = next_assignment(make_annotator(campaign), criterion)
    assert unchecked.hit_id == abandoned.hit_id  # not due: any freed HIT will do
    HitOutput.objects.filter(hit=abandoned.hit).exclude(degraded_text="").delete()
    release(unchecked.annotator, criterion)
    campaign.attention_check_every = 2
    campaign.save()
    due = next_assignment(make_annotator(campaign), criterion)
    assert due.hit_id != abandoned.hit_id and check_slot(due) is not None


def test_the_export_marks_checks_and_the_e2e_layout_leaves_them_out():
    campaign, criterion = checked_campaign(every=1)
    annotator = make_annotator(campaign)
    assignment = work(annotator, criterion, careful=True)
    records = [
        json.loads(row) for row in "".join(export(campaign, "jsonl", criterion)).splitlines()
    ]
    checks = [r for r in records if r["attention_check"]]
    assert len(records) == 4 and len(checks) == 1
    assert checks[0]["output"] == check_slot(assignment).degraded_text and not checks[0]["counted"]
    e2e = "".join(export(campaign, "e2e", criterion))
    assert check_slot(assignment).degraded_text not in e2e
    assert Annotator.objects.get(pk=annotator.pk).attention_checks == 0  # no sweep yet


def test_the_online_estimate_learns_from_outputs_not_from_their_degraded_copies():
    campaign, criterion = checked_campaign(every=1)
    assignment = work(make_annotator(campaign), criterion, careful=True)
    assert check_slot(assignment) is not None
    criterion.refresh_from_db()
    # k = 3 outputs: each system met the two others once; the copy met nobody.
    systems = set(assignment.hit.slots.values_list("output__system_id", flat=True))
    assert {int(s) for s in criterion.estimates} == systems
    assert [n for _, _, n in criterion.estimates.values()] == [2, 2, 2]
