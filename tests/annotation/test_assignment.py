import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connections, transaction

from annotation.handout.assignment import expire_abandoned, lock_criterion, next_assignment, release
from annotation.handout.shown import Answer, shown_outputs
from annotation.handout.submission import Outcome, save_submission
from annotation.identity import set_excluded
from annotation.models import NATURALNESS, QUALITY, Assignment, Campaign, Hit, HitOutput, Judgment
from tests.annotation.test_loads import counted_from_rows
from tests.client import HttpsClient
from tests.factories import (
    make_annotator,
    make_campaign,
    make_item,
    make_judged_hit,
    make_output,
    make_system,
    make_system_set,
)
from tests.handout import kept_loads, submit

# Real concurrency needs PostgreSQL: SQLite serialises every write transaction anyway. The
# marker's tests skip on SQLite, saying where they run (tests/conftest.py).
needs_postgres = pytest.mark.postgres


def task_of(campaign, criterion=QUALITY):
    return campaign.criteria.get(name=criterion)


def do_hit(assignment, criterion, score=100) -> Outcome:
    answers = {s.key: Answer(score=score) for s in shown_outputs(assignment.hit)}
    return submit(assignment, criterion, answers, key=f"key-{assignment.pk}")


def systems_of(hit) -> set[int]:
    return set(hit.slots.values_list("output__system_id", flat=True))


@pytest.mark.django_db
def test_next_assignment_makes_hit_of_k_distinct_active_systems_in_shuffled_order():
    campaign, systems, items = make_system_set(make_campaign(outputs_per_hit=3), 5, 1)
    systems[0].is_active = False
    systems[0].save()
    task = task_of(campaign)
    orders = set()
    for _ in range(12):
        assignment = next_assignment(make_annotator(campaign), task)
        hit = assignment.hit
        assert hit.criterion.name == "quality" and hit.item == items[0]
        assert list(hit.slots.values_list("position", flat=True)) == [1, 2, 3]
        assert len(systems_of(hit)) == 3
        assert systems[0].pk not in systems_of(hit)
        orders.add(tuple(hit.slots.values_list("output__system__name", flat=True)))
    assert len(orders) > 1  # not always the same order


@pytest.mark.django_db
def test_next_assignment_gives_back_the_open_assignment():
    campaign, _, _ = make_system_set()
    annotator, task = make_annotator(campaign), task_of(campaign)
    first = next_assignment(annotator, task)
    assert next_assignment(annotator, task) == first
    assert Assignment.objects.count() == 1


@pytest.mark.django_db
def test_next_assignment_never_repeats_an_item_for_an_annotator():
    campaign, _, items = make_system_set(make_campaign(max_hits_per_annotator=10), 5, 3)
    annotator, task = make_annotator(campaign), task_of(campaign)
    seen = []
    while (assignment := next_assignment(annotator, task)) is not None:
        seen.append(assignment.hit.item_id)
        do_hit(assignment, task)
    assert sorted(seen) == sorted(item.pk for item in items)


@pytest.mark.django_db
def test_next_assignment_stops_at_the_hit_limit():
    campaign, _, _ = make_system_set(make_campaign(max_hits_per_annotator=2), 5, 6)
    annotator, task = make_annotator(campaign), task_of(campaign)
    for _ in range(2):
        do_hit(next_assignment(annotator, task), task)
    assert next_assignment(annotator, task) is None
    assert Assignment.objects.filter(annotator=annotator).count() == 2


@pytest.mark.django_db
def test_next_assignment_limit_is_per_criterion():
    campaign, _, _ = make_system_set(make_campaign(max_hits_per_annotator=1), 5, 2)
    annotator = make_annotator(campaign)
    quality, naturalness = task_of(campaign), task_of(campaign, NATURALNESS)
    do_hit(next_assignment(annotator, quality), quality)
    assert next_assignment(annotator, quality) is None
    assert next_assignment(annotator, naturalness).hit.criterion.name == "naturalness"


@pytest.mark.django_db
def test_next_assignment_needs_k_outputs_of_active_systems():
    campaign = make_campaign(outputs_per_hit=3)
    first, second, third = (make_system(campaign) for _ in range(3))
    item = make_item(campaign)
    make_output(item, first)
    make_output(item, second)
    make_output(item, make_system(campaign, is_active=False))
    make_output(make_item(campaign), third)
    assert next_assignment(make_annotator(campaign), task_of(campaign)) is None
    assert not Hit.objects.exists()


@pytest.mark.django_db
def test_next_assignment_hit_size_is_at_most_the_active_systems():
    campaign, systems, _ = make_system_set(make_campaign(outputs_per_hit=5), systems=3, items=1)
    assignment = next_assignment(make_annotator(campaign), task_of(campaign))
    assert systems_of(assignment.hit) == {s.pk for s in systems}


@pytest.mark.django_db
def test_next_assignment_one_active_system_gives_nothing():
    campaign, systems, _ = make_system_set(make_campaign(outputs_per_hit=2), systems=2, items=1)
    systems[0].is_active = False
    systems[0].save()
    assert next_assignment(make_annotator(campaign), task_of(campaign)) is None


@pytest.mark.django_db
def test_next_assignment_closed_criterion_or_campaign_gives_nothing():
    campaign, _, _ = make_system_set()
    task = task_of(campaign)
    task.is_open = False
    task.save()
    assert next_assignment(make_annotator(campaign), task) is None
    task.is_open = True
    task.save()
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    assert next_assignment(make_annotator(campaign), task) is None
    assert not Assignment.objects.exists()


@pytest.mark.django_db
def test_next_assignment_balances_systems_and_items_over_many_annotators():
    campaign = make_campaign(outputs_per_hit=3, max_hits_per_annotator=5, min_seconds_per_hit=0)
    campaign, systems, items = make_system_set(campaign, systems=6, items=10)
    task = task_of(campaign)
    for _ in range(20):
        annotator = make_annotator(campaign)
        for _ in range(5):
            do_hit(next_assignment(annotator, task), task)
    judgments = Judgment.objects.counted()
    assert judgments.count() == 20 * 5 * 3
    per_system = Counter(judgments.values_list("slot__output__system", flat=True))
    per_item = Counter(Assignment.objects.values_list("hit__item", flat=True))
    assert set(per_system) == {s.pk for s in systems}
    assert max(per_system.values()) - min(per_system.values()) <= 2  # 50 each
    assert set(per_item) == {i.pk for i in items}
    assert max(per_item.values()) - min(per_item.values()) <= 1  # 10 each
    per_pair = Counter(judgments.values_list("slot__output", flat=True))
    assert len(per_pair) == 6 * 10  # every system judged on every item


@pytest.mark.django_db
def test_next_assignment_brings_in_a_system_that_gains_outputs_later():
    campaign = make_campaign(outputs_per_hit=3, min_seconds_per_hit=0)
    campaign, systems, items = make_system_set(campaign, 4, 4)
    task = task_of(campaign)
    for _ in range(4):
        do_hit(next_assignment(make_annotator(campaign), task), task)
    late = make_system(campaign, name="hosted")
    for item in items:
        make_output(item, late)
    for _ in range(4):
        assert late.pk in systems_of(next_assignment(make_annotator(campaign), task).hit)


@pytest.mark.django_db
@pytest.mark.parametrize("left_out", ["excluded", "too_fast"])
def test_next_assignment_balance_ignores_work_that_rankings_leave_out(left_out):
    campaign, _, (first, second) = make_system_set(make_campaign(outputs_per_hit=5), 5, 2)
    flagged = make_judged_hit(list(first.outputs.all()), [50] * 5)
    make_judged_hit(list(second.outputs.all()), [50] * 5)
    if left_out == "excluded":
        flagged.annotator.is_excluded = True
        flagged.annotator.save()
    else:
        flagged.flag = Assignment.Flag.TOO_FAST
        flagged.save()
    assert next_assignment(make_annotator(campaign), task_of(campaign)).hit.item == first


@pytest.mark.django_db
def test_abandoned_assignment_returns_to_the_pool_after_its_timeout():
    campaign, _, _ = make_system_set(make_campaign(outputs_per_hit=5), 5, 1)
    task = task_of(campaign)
    abandoned = next_assignment(make_annotator(campaign), task)
    after = abandoned.expires_at + timedelta(seconds=1)
    later = next_assignment(make_annotator(campaign), task, now=after)
    abandoned.refresh_from_db()
    assert abandoned.status == Assignment.Status.EXPIRED
    assert later.hit == abandoned.hit  # the same HIT, given out again
    assert Hit.objects.count() == 1


@pytest.mark.django_db
def test_expire_abandoned_keeps_assignments_within_their_time():
    campaign, _, _ = make_system_set()
    task = task_of(campaign)
    assignment = next_assignment(make_annotator(campaign), task)
    assert expire_abandoned(task) == 0
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.ASSIGNED
    soon = assignment.expires_at + timedelta(seconds=1)
    assert expire_abandoned(task, now=soon) == 1
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.EXPIRED


@pytest.mark.django_db
def test_release_returns_the_open_hit_at_once():
    campaign, _, _ = make_system_set(make_campaign(outputs_per_hit=5), 5, 1)
    task = task_of(campaign)
    quitter = make_annotator(campaign)
    mine = next_assignment(quitter, task)
    release(quitter, task)
    mine.refresh_from_db()
    assert mine.status == Assignment.Status.EXPIRED
    assert next_assignment(make_annotator(campaign), task).hit == mine.hit
    assert next_assignment(quitter, task) is None  # the item was seen


# Real concurrency on PostgreSQL -------------------------------------------------------------


def run_together(*calls):
    """Run the calls in threads (each with its own connection) released at one instant."""
    barrier = threading.Barrier(len(calls))
    results, errors = [None] * len(calls), []

    def run(index, call):
        try:
            barrier.wait()
            results[index] = call()
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_next_assignment_concurrent_annotators_never_share_a_slot():
    campaign, _, items = make_system_set(make_campaign(outputs_per_hit=5), 5, 8)
    task = task_of(campaign)
    annotators = [make_annotator(campaign) for _ in range(8)]
    results = run_together(*[lambda a=a: next_assignment(a, task) for a in annotators])
    assert len({r.pk for r in results}) == 8
    assert sorted(r.hit.item_id for r in results) == sorted(i.pk for i in items)
    assert Hit.objects.count() == 8
    assert HitOutput.objects.count() == 40
    assert kept_loads(task) == counted_from_rows(task)  # no update lost under concurrency


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_next_assignment_concurrent_requests_reuse_a_free_hit_once():
    campaign, _, _ = make_system_set(make_campaign(outputs_per_hit=3), 6, 1)
    task = task_of(campaign)
    quitter = make_annotator(campaign)
    gone = next_assignment(quitter, task)
    release(quitter, task)  # its HIT is free again
    annotators = [make_annotator(campaign) for _ in range(6)]
    results = run_together(*[lambda a=a: next_assignment(a, task) for a in annotators])
    hits = Counter(r.hit_id for r in results)
    assert hits[gone.hit_id] == 1
    assert max(hits.values()) == 1
    assert Assignment.objects.exclude(status="expired").count() == 6


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_next_assignment_two_browsers_of_one_annotator_get_one_assignment():
    campaign, _, _ = make_system_set(make_campaign(outputs_per_hit=5), 5, 4)
    task, annotator = task_of(campaign), make_annotator(campaign)
    results = run_together(*[lambda: next_assignment(annotator, task)] * 4)
    assert len({r.pk for r in results}) == 1
    assert Assignment.objects.count() == 1


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_submit_concurrent_double_post_saves_once():
    campaign, _, _ = make_system_set(make_campaign(outputs_per_hit=5), 5, 1)
    task = task_of(campaign)
    assignment = next_assignment(make_annotator(campaign), task)

    def post():
        return do_hit(Assignment.objects.get(pk=assignment.pk), task, score=42)

    outcomes = run_together(post, post, post)
    assert sorted(o.value for o in outcomes) == ["repeated", "repeated", "saved"]
    assert Judgment.objects.filter(assignment=assignment).count() == 5
    assert kept_loads(task) == counted_from_rows(task)


@pytest.mark.django_db
def test_a_submission_read_before_an_exclusion_counts_it_when_written():
    """The HIT page reads the assignment before it takes the criterion's lock; an exclusion
    in between must still decide whether the HIT counts towards balance."""
    campaign, _, _ = make_system_set(make_campaign(outputs_per_hit=3, min_seconds_per_hit=0), 5, 2)
    task, annotator = task_of(campaign), make_annotator(campaign)
    assignment = next_assignment(annotator, task)
    read_first = Assignment.objects.select_related("annotator", "hit").get(pk=assignment.pk)
    set_excluded(annotator, True)
    answers = {s.key: Answer(score=60) for s in shown_outputs(read_first.hit)}
    with transaction.atomic():
        outcome = save_submission(
            read_first, lock_criterion(task), shown_outputs(read_first.hit), answers, "k"
        )
    assert outcome == Outcome.SAVED
    assert Judgment.objects.filter(assignment=assignment).count() == 3
    assert kept_loads(task) == counted_from_rows(task)  # excluded: not live


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_hit_page_concurrent_double_post_saves_once_and_hands_out_once(client):
    campaign, _, _ = make_system_set(make_campaign(outputs_per_hit=3, min_seconds_per_hit=0), 5, 4)
    task = task_of(campaign)
    base = f"/annotate/{campaign.slug}/quality/"
    client.get(base, {"PROLIFIC_PID": "double", "STUDY_ID": "s"})
    hit_page = client.post(f"{base}start/").url
    assignment = Assignment.objects.get(annotator__external_id="double")
    data = {f"score_{s.position}": "70" for s in assignment.hit.slots.all()}
    data |= {f"perfect_{s.position}": "on" for s in assignment.hit.slots.all()}
    data["submission_key"] = "same-page"
    cookies = client.cookies

    def post():
        browser = HttpsClient()  # another tab of the same browser: the same cookies
        browser.cookies = cookies
        return browser.post(hit_page, data).status_code

    assert run_together(post, post, post) == [302, 302, 302]
    assert Judgment.objects.filter(assignment=assignment).count() == 3
    mine = Assignment.objects.filter(annotator=assignment.annotator)
    assert mine.filter(status="assigned").count() == 1  # one next HIT, not three
    assert kept_loads(task) == counted_from_rows(task)
