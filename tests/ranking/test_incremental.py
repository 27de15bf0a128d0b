"""The summed views (ranking/incremental.py): after any sequence of submissions, exclusions
and flag changes, the ranking kept by adding up what changed is the full recomputation's,
and a submission costs a read of its own judgments only."""

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.handout import sql
from annotation.handout.submission import Answer, clear_flags, shown_outputs
from annotation.identity import set_excluded
from annotation.judging import form_named
from annotation.models import Assignment, Campaign, CampaignCriterion, Judgment
from ranking.agreement.models import RunAgreement
from ranking.batch import execute_queued_runs
from ranking.incremental import Sums, keep, up_to_date_sums
from ranking.models import RankingRun, SystemResult, ViewState
from ranking.service import execute_run, queue_due_rankings
from tests.factories import make_annotator, make_assignment, make_hit, make_system_set
from tests.handout import submit

pytestmark = pytest.mark.django_db

SUMMED = ["bt", "bws"]
RESULT_FIELDS = (
    "position",
    "cluster",
    "mu",
    "sigma",
    "mu_std",
    "ci_lo",
    "ci_hi",
    "rank_lo",
    "rank_hi",
    "comparisons",
    "wins",
    "losses",
    "mean_raw",
)
RUN_FIELDS = (
    "status",
    "note",
    "judgments",
    "hits",
    "comparisons",
    "judgments_version",
    "judgments_per_system",
    "hits_per_composition",
)


class Campaigning:
    """A RankME campaign that random steps change as annotators and organisers do."""

    def __init__(self, seed: int, systems: int = 5, items: int = 6) -> None:
        self.rng = np.random.default_rng(seed)
        self.campaign, self.systems, self.items = make_system_set(systems=systems, items=items)
        Campaign.objects.filter(pk=self.campaign.pk).update(min_seconds_per_hit=30)
        self.criterion = self.campaign.criteria.get(name="quality")
        self.annotators = [make_annotator(self.campaign) for _ in range(3)]
        self.handed_out: list[Assignment] = []

    def hand_out(self, flagged: bool = False) -> Assignment:
        """A new HIT of some outputs of an item, given out to an annotator; submitted soon
        (flagged: too soon) it is not flagged (flagged)."""
        item = self.items[self.rng.integers(len(self.items))]
        outputs = list(item.outputs.order_by("system__name"))
        shown = self.rng.permutation(len(outputs))[: self.rng.integers(2, len(outputs) + 1)]
        hit = make_hit([outputs[i] for i in shown])
        annotator = self.annotators[self.rng.integers(len(self.annotators))]
        started = timezone.now() - timedelta(seconds=0 if flagged else 300)
        return make_assignment(hit, annotator, started_at=started)

    def submit_new_hit(self, flagged: bool = False) -> int:
        return self.submit(self.hand_out(flagged))

    def submit_an_earlier_hit(self) -> int:
        """A HIT given out before others that were submitted meanwhile: in ranking order
        (by HIT) its judgments come before some summed already, and may move a system's
        first appearance."""
        if not self.handed_out:
            self.handed_out = [self.hand_out() for _ in range(3)]
        return self.submit(self.handed_out.pop(self.rng.integers(len(self.handed_out))))

    def submit(self, assignment: Assignment) -> int:
        hit = assignment.hit
        scores = self.rng.choice([20, 50, 50, 80, 100], size=hit.slots.count())
        answers = {
            shown.key: Answer(score=float(score))
            for shown, score in zip(shown_outputs(hit), scores, strict=True)
        }
        submit(assignment, self.criterion, answers, f"key-{assignment.pk}")
        return assignment.judgments.count()

    def exclude_or_readmit(self) -> None:
        annotator = self.annotators[self.rng.integers(len(self.annotators))]
        annotator.refresh_from_db()
        set_excluded(annotator, not annotator.is_excluded)

    def clear_the_flags(self) -> None:
        clear_flags(Assignment.objects.filter(hit__criterion=self.criterion))

    def step(self) -> int | None:
        """One random change; the judgments it added if it only added (a submission),
        else None."""
        roll = self.rng.random()
        if roll < 0.4:
            return self.submit_new_hit()
        if roll < 0.6:
            return self.submit_an_earlier_hit()
        if roll < 0.7:
            return self.submit_new_hit(flagged=True)
        if roll < 0.85:
            self.exclude_or_readmit()
        else:
            self.clear_the_flags()
        return None


def ranked(criterion: CampaignCriterion, protocol: str, settings, incremental: bool):
    """A run of the view executed with or without the sums: its fields and its results."""
    settings.RANKING_INCREMENTAL = incremental
    run = RankingRun.objects.create(
        campaign=criterion.campaign,
        criterion=criterion,
        protocol=protocol,
        repetitions=20,
        seed=7,
    )
    execute_run(run)
    run.refresh_from_db()
    results = {
        row["system_id"]: tuple(row[name] for name in RESULT_FIELDS)
        for row in SystemResult.objects.filter(run=run).values("system_id", *RESULT_FIELDS)
    }
    return {name: getattr(run, name) for name in RUN_FIELDS}, results


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_summed_views_equal_the_full_recomputation_after_every_change(seed, settings, caplog):
    world = Campaigning(seed)
    caplog.set_level("INFO", logger="ranking.incremental")
    for _ in range(14):
        world.step()
        for protocol in SUMMED:
            summed = ranked(world.criterion, protocol, settings, incremental=True)
            full = ranked(world.criterion, protocol, settings, incremental=False)
            assert summed == full
    assert summed[1]
    added_up = [m for m in caplog.messages if "read" in m and "started again" not in m]
    assert len(added_up) >= 4  # the sums were added to, not only started again


@pytest.mark.parametrize("protocol", SUMMED)
def test_a_submission_is_read_alone(protocol, settings):
    world = Campaigning(seed=5)
    for _ in range(6):
        world.submit_new_hit()
    criterion = CampaignCriterion.objects.get(pk=world.criterion.pk)
    assert up_to_date_sums(criterion, protocol).from_scratch
    for step in range(8):
        added = world.submit_an_earlier_hit() if step % 2 else world.submit_new_hit()
        criterion.refresh_from_db()
        fresh = up_to_date_sums(criterion, protocol)
        assert (fresh.from_scratch, fresh.rows_read) == (False, added)
    # Nothing new: nothing read.
    assert up_to_date_sums(criterion, protocol).rows_read == 0


def test_a_rewrite_starts_the_sums_again():
    world = Campaigning(seed=6)
    for _ in range(4):
        world.submit_new_hit()
    criterion = CampaignCriterion.objects.get(pk=world.criterion.pk)
    up_to_date_sums(criterion, "bt")
    world.exclude_or_readmit()
    criterion.refresh_from_db()
    fresh = up_to_date_sums(criterion, "bt")
    assert fresh.from_scratch
    assert ViewState.objects.get(criterion=criterion, protocol="bt").rewrites == (
        criterion.judgments_rewrites
    )


def test_a_rewrite_during_the_read_starts_the_sums_again():
    """The criterion read before a rewrite, the judgments after it: the sums read are not
    the kept ones plus additions, so they start again."""
    world = Campaigning(seed=7)
    for _ in range(4):
        world.submit_new_hit()
    criterion = CampaignCriterion.objects.get(pk=world.criterion.pk)
    up_to_date_sums(criterion, "bt")
    world.submit_new_hit()
    criterion.refresh_from_db()
    world.exclude_or_readmit()  # after the criterion was read
    assert up_to_date_sums(criterion, "bt").from_scratch


def test_a_worker_whose_sums_were_replaced_meanwhile_keeps_nothing():
    world = Campaigning(seed=8)
    for _ in range(3):
        world.submit_new_hit()
    criterion = CampaignCriterion.objects.get(pk=world.criterion.pk)
    up_to_date_sums(criterion, "bt")
    stale = ViewState.objects.get(criterion=criterion, protocol="bt")
    world.submit_new_hit()
    criterion.refresh_from_db()
    up_to_date_sums(criterion, "bt")  # another worker adds the new HIT
    kept = ViewState.objects.get(pk=stale.pk)
    keep(stale, criterion, "bt", Sums(), stale.covers_judgment_id + 1000)  # the late one
    assert ViewState.objects.get(pk=stale.pk).statistics == kept.statistics
    # and the next run adds nothing twice
    assert up_to_date_sums(criterion, "bt").rows_read == 0


def test_the_sums_read_only_the_new_judgments_in_one_query(settings):
    world = Campaigning(seed=9)
    for _ in range(3):
        world.submit_new_hit()
    criterion = CampaignCriterion.objects.get(pk=world.criterion.pk)
    up_to_date_sums(criterion, "bws")
    covered = ViewState.objects.get(criterion=criterion, protocol="bws").covers_judgment_id
    world.submit_new_hit()
    criterion.refresh_from_db()
    with CaptureQueriesContext(connection) as queries:
        up_to_date_sums(criterion, "bws")
    reads = [q["sql"] for q in queries.captured_queries if "annotation_judgment" in q["sql"]]
    assert len(reads) == 1
    assert f"> {covered}" in reads[0]


@pytest.mark.parametrize("protocol", SUMMED)
def test_a_hit_given_out_earlier_and_submitted_later_renumbers_the_systems(protocol, settings):
    """The full read numbers systems by first appearance, HIT by HIT: a HIT given out first
    and submitted last moves its systems to the front."""
    world = Campaigning(seed=10, systems=4, items=2)
    outputs = list(world.items[0].outputs.order_by("system__name"))
    annotator = world.annotators[0]
    started = timezone.now() - timedelta(seconds=300)
    first = make_assignment(make_hit(outputs[:2]), annotator, started_at=started)
    second = make_assignment(make_hit([outputs[2], outputs[1], outputs[3]]), started_at=started)
    world.submit(second)
    assert ranked(world.criterion, protocol, settings, incremental=True) == (
        ranked(world.criterion, protocol, settings, incremental=False)
    )
    world.submit(first)
    summed = ranked(world.criterion, protocol, settings, incremental=True)
    assert summed == ranked(world.criterion, protocol, settings, incremental=False)
    state = ViewState.objects.get(criterion=world.criterion, protocol=protocol)
    assert Sums.from_json(state.statistics).systems() == [o.system_id for o in outputs[:4]]


def choose(criterion: CampaignCriterion, outputs, scores, annotator) -> None:
    """A best-worst (pairwise where two) judgment as a submission stores it: best 1, worst
    0, the rest (or a tie) a half; recorded as a submission records it."""
    hit = make_hit(outputs, criterion=criterion)
    assignment = make_assignment(hit, annotator)
    Assignment.objects.filter(pk=assignment.pk).update(
        status=Assignment.Status.SUBMITTED, submitted_at=timezone.now()
    )
    for slot, score in zip(hit.slots.order_by("position"), scores, strict=True):
        Judgment.objects.create(assignment=assignment, slot=slot, criterion=criterion, score=score)
    sql.execute(*sql.judgments_change(criterion))


@pytest.mark.parametrize("width", [2, 3])
def test_bradley_terry_of_choices_equals_the_full_recomputation(width, settings):
    world = Campaigning(seed=20 + width, systems=4, items=5)
    criterion = world.criterion
    criterion.form = form_named("pairwise").name
    criterion.settings = {"best_worst": width} if width > 2 else {}
    criterion.save()
    choices = [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]] if width == 2 else [[1, 0, 0.5], [0.5, 1, 0]]
    for step in range(10):
        if step % 4 == 3:
            world.exclude_or_readmit()
        else:
            item = world.items[world.rng.integers(len(world.items))]
            outputs = list(item.outputs.all())
            shown = [outputs[i] for i in world.rng.permutation(len(outputs))[:width]]
            scores = choices[world.rng.integers(len(choices))]
            annotator = world.annotators[world.rng.integers(len(world.annotators))]
            choose(criterion, shown, scores, annotator)
        summed = ranked(criterion, "bt", settings, incremental=True)
        assert summed == ranked(criterion, "bt", settings, incremental=False)
    assert summed[1]  # ranked, not "nothing to rank"
    assert ViewState.objects.filter(criterion=criterion, protocol="bt").exists()


def test_summed_runs_are_given_the_agreement_the_shared_read_measures():
    world = Campaigning(seed=30)
    for _ in range(5):
        world.submit_new_hit()
    first, *others = queue_due_rankings()
    assert [first.protocol, others[0].protocol] == SUMMED  # ranked first, from their sums
    assert execute_queued_runs(first)
    runs = RankingRun.objects.filter(criterion=world.criterion)
    assert set(runs.values_list("status", flat=True)) == {"done"}
    measured = RunAgreement.objects.filter(run__in=runs).values_list("alpha", "units")
    assert len(measured) == len(runs) and len(set(measured)) == 1
