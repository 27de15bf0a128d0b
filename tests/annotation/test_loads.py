"""The kept loads that the hand-out balances on: equal to a count from the rows after any
sequence of what annotators and organisers do."""

import random
from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Prefetch
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.attention import record_due_verdicts
from annotation.handout.assignment import next_assignment, release
from annotation.handout.loads import recount_loads
from annotation.handout.shown import Answer, shown_outputs
from annotation.handout.submission import clear_flags
from annotation.identity import set_excluded
from annotation.models import (
    QUALITY,
    Assignment,
    HitOutput,
    ItemLoad,
)
from tests.factories import (
    make_annotator,
    make_bulk_judged_campaign,
    make_campaign,
    make_system_set,
)
from tests.handout import kept_loads, submit

pytestmark = pytest.mark.django_db


def counted_from_rows(criterion) -> dict[str, dict]:
    """The loads by their definition, from every assignment of the criterion (read in three
    queries: the property tests call it after every step)."""
    per_item, per_system, per_pair = Counter(), Counter(), Counter()
    original_slots = Prefetch(
        "hit__slots",
        queryset=HitOutput.objects.filter(degraded_text="").select_related("output"),
        to_attr="original_slots",
    )
    assignments = (
        Assignment.objects.filter(hit__criterion=criterion)
        .select_related("hit", "annotator")
        .prefetch_related(original_slots)
    )
    for a in assignments:
        counted = a.status == "submitted" and not a.flag and a.annotator.counts
        if a.status == "assigned" or counted:
            per_item[a.hit.item_id] += 1
            for slot in a.hit.original_slots:
                per_system[slot.output.system_id] += 1
                per_pair[a.hit.item_id, slot.output.system_id] += 1
    # A HIT is free when it has assignments and all of them expired.
    statuses = defaultdict(set)
    campaign_assignments = Assignment.objects.filter(hit__campaign_id=criterion.campaign_id)
    for hit, item, status in campaign_assignments.values_list("hit_id", "hit__item_id", "status"):
        statuses[hit, item].add(status)
    free = Counter(item for (_, item), seen in statuses.items() if seen == {"expired"})
    return {
        "items": dict(per_item),
        "systems": dict(per_system),
        "pairs": dict(per_pair),
        "free": dict(free),
    }


def answer_all(assignment, score: int = 50) -> dict[int, Answer]:
    return {shown.key: Answer(score=score) for shown in shown_outputs(assignment.hit)}


@pytest.mark.parametrize("seed", [1, 2])
def test_kept_loads_equal_a_count_from_the_rows_after_any_sequence(seed):
    rng = random.Random(seed)
    campaign, _, _ = make_system_set(
        make_campaign(outputs_per_hit=3, min_seconds_per_hit=0, attention_check_every=2),
        systems=5,
        items=12,
    )
    criterion = campaign.criteria.get(name=QUALITY)
    annotators = [make_annotator(campaign) for _ in range(5)]
    clock = timezone.now()  # hand-outs see time pass only when an "expire" step says so
    actions = ["take", "take", "submit", "submit", "expire", "late", "release", "exclude"]
    actions.append("attention")  # every score is 50: three checks fail an annotator
    for step in range(50):
        annotator = rng.choice(annotators)
        action = rng.choice(actions)
        open_one = Assignment.objects.filter(annotator=annotator, status="assigned").first()
        expired = Assignment.objects.filter(annotator=annotator, status="expired").last()
        if action == "take":
            next_assignment(annotator, criterion, now=clock)
        elif action == "submit" and open_one:
            # Every third submission is too fast for the campaign, so it is flagged.
            campaign.min_seconds_per_hit = 3600 if step % 3 == 0 else 0
            campaign.save(update_fields=["min_seconds_per_hit"])
            submit(open_one, criterion, answer_all(open_one), key=f"k{step}")
        elif action == "expire" and open_one:  # time passes beyond its timeout
            clock = open_one.expires_at + timedelta(seconds=1)
        elif action == "late" and expired:  # its HIT may have gone to someone else
            submit(expired, criterion, answer_all(expired), key=f"k{step}")
        elif action == "release":
            release(annotator, criterion)
        elif action == "exclude":
            annotator.refresh_from_db()
            set_excluded(annotator, not annotator.is_excluded)
        elif action == "attention":
            record_due_verdicts()
        if step % 10 == 9:
            flagged = Assignment.objects.filter(flag="too_fast").values_list("pk", flat=True)
            clear_flags(Assignment.objects.filter(pk__in=list(flagged[:2])))
        criterion.refresh_from_db()
        # Expiry is applied by the next hand-out; compare once it has been.
        next_assignment(make_annotator(campaign), criterion, now=clock)
        assert kept_loads(criterion) == counted_from_rows(criterion), f"after step {step}"


def test_recount_loads_repairs_counts_written_wrongly():
    campaign, _, items = make_system_set(systems=3, items=2)
    criterion = campaign.criteria.get(name=QUALITY)
    next_assignment(make_annotator(campaign), criterion)
    ItemLoad.objects.filter(criterion=criterion).update(live=99)
    recount_loads(criterion)
    assert kept_loads(criterion) == counted_from_rows(criterion)


# What a request costs -----------------------------------------------------------------------


# SQL queries per request, at most; the same whatever the campaign's size. The submission
# includes the next hand-out. Measured outside a test transaction (transaction=True), as
# production runs: there a request's transaction is BEGIN and COMMIT, which Django logs
# and which are not counted as queries, where inside a test's transaction each atomic
# block would add a SAVEPOINT and its RELEASE.
TRANSACTION_CONTROL = ("BEGIN", "BEGIN IMMEDIATE", "COMMIT")
BOUNDS = {"entry": 10, "instructions": 10, "start": 10, "hit": 8, "submit": 15}


def visit_costs(client, campaign, pid: str) -> dict[str, list[int]]:
    """The SQL queries of each request of a crowd worker's visit."""
    base = f"/annotate/{campaign.slug}/quality/"
    costs: dict[str, list[int]] = {}

    def measure(name, request):
        with CaptureQueriesContext(connection) as queries:
            response = request()
        statements = [q for q in queries if q["sql"] not in TRANSACTION_CONTROL]
        costs.setdefault(name, []).append(len(statements))
        return response

    measure("entry", lambda: client.get(base, {"PROLIFIC_PID": pid, "STUDY_ID": "s"}))
    assert measure("instructions", lambda: client.get(base)).status_code == 200
    hit_page = measure("start", lambda: client.post(f"{base}start/")).url
    for n in range(3):
        assert measure("hit", lambda page=hit_page: client.get(page)).status_code == 200
        assignment = Assignment.objects.get(pk=int(hit_page.rstrip("/").rsplit("/", 1)[1]))
        data = {f"score_{s.position}": "50" for s in assignment.hit.slots.all()}
        data |= {f"perfect_{s.position}": "on" for s in assignment.hit.slots.all()}
        data["submission_key"] = f"k{n}"
        response = measure("submit", lambda page=hit_page, data=data: client.post(page, data))
        assert response.status_code == 302
        hit_page = response.url
    assert Assignment.objects.filter(annotator__external_id=pid, status="submitted").count() == 3
    return costs


@pytest.mark.django_db(transaction=True)
def test_annotator_requests_cost_the_same_whatever_the_campaign_size(client):
    measured = {}
    for hits in (50, 500):
        campaign = make_bulk_judged_campaign(
            hits, items=hits + 20, min_seconds_per_hit=0, attention_check_every=1
        )
        criterion = campaign.criteria.get(name=QUALITY)
        next_assignment(make_annotator(campaign), criterion)  # the pool is counted, once
        measured[hits] = visit_costs(client, campaign, f"visitor-{hits}")
    print(f"\nSQL queries per request: {measured[500]}")
    assert measured[50] == measured[500]
    for name, bound in BOUNDS.items():
        assert max(measured[500][name]) <= bound, (name, measured[500][name])
