"""Active composition in the platform: the HIT records its policy, the online estimate
follows each counted submission and is reset from every judgment, concurrency, costs, and
the organiser's switch in the admin."""

import pytest
from django.db import transaction
from django.urls import reverse

import annotation.handout.composition as composition
from annotation.handout.assignment import lock_criterion, next_assignment
from annotation.handout.composition import replayed_estimates, reset_estimates
from annotation.handout.shown import Answer, shown_outputs
from annotation.models import QUALITY, Assignment, Composition, Hit, Judgment
from nlgdata.composition import ACTIVE_PER_PAIR
from tests.annotation.test_assignment import needs_postgres, run_together
from tests.annotation.test_loads import BOUNDS, visit_costs
from tests.factories import (
    make_annotator,
    make_bulk_judged_campaign,
    make_campaign,
    make_system_set,
)
from tests.handout import submit

STRENGTH = {"sys1": 90, "sys2": 80, "sys3": 70, "sys4": 60, "sys5": 50, "sys6": 40}


def active_criterion(systems=6, items=12, share=20, **fields):
    campaign, rows, _ = make_system_set(
        make_campaign(min_seconds_per_hit=0, **fields), systems, items
    )
    criterion = campaign.criteria.get(name=QUALITY)
    criterion.composition, criterion.balanced_share = Composition.ACTIVE, share
    criterion.save()
    return campaign, criterion


def answer(assignment, criterion, key=None):
    """Scores by the systems' fixed strengths (the first system best)."""
    answers = {
        s.key: Answer(score=STRENGTH[s.slots[0].output.system.name])
        for s in shown_outputs(assignment.hit)
    }
    return submit(assignment, criterion, answers, key=key or f"k{assignment.pk}")


def work(campaign, criterion, hits: int) -> None:
    for _ in range(hits):
        assignment = next_assignment(make_annotator(campaign), criterion)
        answer(assignment, criterion)


def rounded(estimates: dict) -> dict:
    return {s: [round(v, 9) for v in values] for s, values in estimates.items()}


@pytest.mark.django_db
def test_every_hit_records_the_policy_that_composed_it():
    campaign, criterion = active_criterion(share=50, items=40, outputs_per_hit=3)
    work(campaign, criterion, 40)
    policies = set(Hit.objects.values_list("composition", flat=True))
    assert policies == {Composition.ACTIVE, Composition.BALANCED}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("per_pair", "expected"), [(40, Composition.ACTIVE), (50, Composition.BALANCED)]
)
def test_active_composes_balanced_after_its_comparisons_per_pair(per_pair, expected):
    campaign, criterion = active_criterion(share=0, outputs_per_hit=3)
    assert ACTIVE_PER_PAIR == 50
    systems = campaign.systems.order_by("pk")
    each = 2 * per_pair * (len(systems) - 1) // 2  # 15 pairs: 2 * per_pair * 15 / 6 each
    criterion.estimates = {str(s.pk): [n / 10, 0.3, each] for n, s in enumerate(systems)}
    criterion.save()
    work(campaign, criterion, 3)
    assert set(Hit.objects.values_list("composition", flat=True)) == {expected}


@pytest.mark.django_db
def test_a_balanced_criterion_records_balanced_hits():
    campaign, _, _ = make_system_set(make_campaign(min_seconds_per_hit=0), 5, 3)
    criterion = campaign.criteria.get(name=QUALITY)
    work(campaign, criterion, 3)
    assert set(Hit.objects.values_list("composition", flat=True)) == {Composition.BALANCED}


@pytest.mark.django_db
def test_the_online_estimate_follows_each_counted_submission():
    campaign, criterion = active_criterion(outputs_per_hit=3)
    work(campaign, criterion, 10)
    criterion.refresh_from_db()
    online = criterion.estimates
    assert sum(n for _, _, n in online.values()) == 10 * 3 * 2  # 3 pairs a HIT, 2 systems each
    by_name = {campaign.systems.get(pk=int(s)).name: mu for s, (mu, _, _) in online.items()}
    assert by_name["sys1"] > by_name["sys6"]
    assert reset_estimates(criterion)  # the same judgments, replayed: the same estimate
    criterion.refresh_from_db()
    assert rounded(criterion.estimates) == rounded(online)


@pytest.mark.django_db
def test_a_flagged_submission_teaches_the_estimate_nothing():
    campaign, criterion = active_criterion(outputs_per_hit=3)
    campaign.min_seconds_per_hit = 3600
    campaign.save()
    work(campaign, criterion, 2)
    assert Assignment.objects.flagged().count() == 2
    criterion.refresh_from_db()
    assert criterion.estimates == {}


@pytest.mark.django_db
def test_reset_writes_nothing_when_the_judgments_changed_meanwhile(monkeypatch):
    campaign, criterion = active_criterion(outputs_per_hit=3)
    work(campaign, criterion, 2)
    criterion.refresh_from_db()
    before = criterion.estimates
    replay = composition.replayed_estimates

    def a_submission_comes_meanwhile(rows):
        estimates = replay(rows)
        work(campaign, criterion, 1)
        return estimates

    monkeypatch.setattr(composition, "replayed_estimates", a_submission_comes_meanwhile)
    assert not reset_estimates(criterion)
    criterion.refresh_from_db()
    assert criterion.estimates != before  # the online update of the third HIT, kept
    assert sum(n for _, _, n in criterion.estimates.values()) == 3 * 3 * 2


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_submissions_lose_no_update_of_the_estimate():
    campaign, criterion = active_criterion(items=8, outputs_per_hit=4)
    assignments = [next_assignment(make_annotator(campaign), criterion) for _ in range(8)]
    run_together(*[lambda a=a: answer(a, criterion) for a in assignments])
    criterion.refresh_from_db()
    online = criterion.estimates
    assert sum(n for _, _, n in online.values()) == 8 * 6 * 2
    # Each submission updated from its predecessor's estimate, in the order the lock gave:
    # replaying them in the order they were submitted gives the estimate kept.
    rows = Judgment.objects.order_by(
        "assignment__submitted_at", "assignment_id", "slot__position"
    ).values_list("assignment_id", "slot__output__system_id", "score")
    assert rounded(replayed_estimates(rows)) == rounded(online)


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_reset_never_waits_for_a_submission_holding_the_lock():
    campaign, criterion = active_criterion(outputs_per_hit=3)
    work(campaign, criterion, 2)
    with transaction.atomic():
        lock_criterion(criterion)  # a submission in progress, in this thread's connection
        assert run_together(lambda: reset_estimates(criterion)) == [False]


def inline_form_data(page) -> dict:
    """Every field of an admin change page's form and inlines, as the browser would send."""
    data: dict = {}
    forms = [page.context["adminform"].form]
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        forms += [formset.management_form, *formset.forms]
    for form in forms:
        for field in form:
            value = field.value()
            if value is None or value is False:
                continue
            data[field.html_name] = "on" if value is True else value
    return data


def test_organiser_switches_a_running_criterion_to_active_in_the_admin(organiser):
    campaign, _, _ = make_system_set(make_campaign(min_seconds_per_hit=0), 5, 4)
    criterion = campaign.criteria.get(name=QUALITY)
    work(campaign, criterion, 1)
    url = reverse("admin:annotation_campaign_change", args=[campaign.pk])
    page = organiser.get(url)
    work(campaign, criterion, 1)  # a submission while the organiser edits
    data = inline_form_data(page)
    prefix = next(k for k, v in data.items() if k.endswith("-id") and v == criterion.pk)[:-3]
    data[f"{prefix}-composition"] = Composition.ACTIVE
    data[f"{prefix}-balanced_share"] = 30
    data[f"{prefix}-close_when_stable_for"] = 500
    response = organiser.submit(page, data, action=url)
    assert response.status_code == 302, response.context["errors"]
    criterion.refresh_from_db()
    assert (criterion.composition, criterion.balanced_share) == (Composition.ACTIVE, 30)
    assert criterion.close_when_stable_for == 500
    assert criterion.judgments_version == 2  # the edit wrote back nothing it read earlier
    assert sum(n for _, _, n in criterion.estimates.values()) == 2 * 10 * 2


@pytest.mark.django_db(transaction=True)
def test_active_composition_costs_no_query_more_than_balanced(client):
    # 30 HITs of 5 systems: 30 comparisons per pair, under ACTIVE_PER_PAIR, so that the
    # visit's HITs are composed actively.
    campaign = make_bulk_judged_campaign(30, items=70, min_seconds_per_hit=0)
    criterion = campaign.criteria.get(name=QUALITY)
    criterion.composition, criterion.balanced_share = Composition.ACTIVE, 0
    criterion.save()
    next_assignment(make_annotator(campaign), criterion)  # the pool is counted, once
    assert reset_estimates(criterion)
    costs = visit_costs(client, campaign, "visitor")
    for name, bound in BOUNDS.items():
        assert max(costs[name]) <= bound, (name, costs[name])
    mine = Hit.objects.filter(assignments__annotator__external_id="visitor")
    assert set(mine.values_list("composition", flat=True)) == {Composition.ACTIVE}
