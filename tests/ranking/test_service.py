import statistics
from datetime import timedelta

import numpy as np
import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.handout.assignment import next_assignment
from annotation.handout.composition import reset_estimates
from annotation.models import Assignment, CampaignCriterion
from jobs.claims import ClaimLost
from ranking.agreement.models import AnnotatorAgreement, RunAgreement
from ranking.agreement.service import JUDGMENT_ROW, measure
from ranking.batch import KeptAsSent, execute_queued_runs
from ranking.engine import e2e_protocol, summarise
from ranking.models import RankingRun, SystemResult
from ranking.protocols import NAMES
from ranking.service import (
    NothingToRank,
    SharedRead,
    clusters_of,
    due_protocols,
    execute_run,
    load_ranking_input,
    queue_due_rankings,
    rank_input,
    ranking_input_from_array,
    ranking_input_from_rows,
    result_rows,
    store_results,
)
from tests.factories import (
    make_annotator,
    make_item,
    make_judged_hit,
    make_output,
    make_system_set,
)
from tests.ranking.engine.test_evidence import first_400_hits_all_100

pytestmark = pytest.mark.django_db

# The views that fit RankME's judgments (its form's `protocols`), in the registry's order:
# the sweep queues these for a RankME criterion, and not the DA-only ones (webnlg), nor the
# fused view of humans and a judge without a fused judge (tests/judges/test_fusion.py).
RANKME_VIEWS = [name for name in NAMES if name not in ("webnlg", "fused")]


def judged_campaign(hits: int = 30, seed: int = 1):
    """Three systems where sys1 > sys2 > sys3 in every HIT, with some ties."""
    campaign, systems, items = make_system_set(systems=3, items=hits)
    rng = np.random.default_rng(seed)
    for item in items:
        outputs = list(item.outputs.order_by("system__name"))
        order = rng.permutation(3)
        scores = [[120, 100, 40][i] if rng.random() > 0.1 else 100 for i in order]
        make_judged_hit([outputs[i] for i in order], scores)
    return campaign, systems


def quality_run(campaign, **fields) -> RankingRun:
    """A quality ranking run of 10 repetitions, unless `fields` say otherwise."""
    return RankingRun.objects.create(
        **{
            "campaign": campaign,
            "criterion": campaign.criteria.get(name="quality"),
            "repetitions": 10,
            **fields,
        }
    )


def test_load_ranking_input_numbers_systems_by_first_appearance():
    campaign, systems, items = make_system_set(systems=3, items=2)
    first = list(items[0].outputs.order_by("system__name"))
    make_judged_hit([first[2], first[0], first[1]], [10, 20, 20])
    data = load_ranking_input(campaign.criteria.get(name="quality"))
    assert data.systems == [systems[2].pk, systems[0].pk, systems[1].pk]
    assert (data.hits, data.judgments, len(data.comparisons.winner)) == (1, 3, 3)
    assert data.comparisons.draw.sum() == 1


def test_load_ranking_input_reads_each_judgments_annotator_in_the_same_one_query(
    django_assert_num_queries,
):
    campaign, systems, items = make_system_set(systems=3, items=2)
    first, second = (list(item.outputs.order_by("system__name")) for item in items)
    alice, bob = make_annotator(campaign), make_annotator(campaign)
    make_judged_hit(first, [10, 20, 30], annotator=alice)
    make_judged_hit(second[:2], [40, 50], annotator=bob)
    criterion = campaign.criteria.get(name="quality")
    with django_assert_num_queries(1):
        data = load_ranking_input(criterion)
    # Annotators are numbered by first appearance, like systems: a bundle, which knows them
    # by pseudonym only, then gives the same input.
    assert data.scores.annotator.tolist() == [0] * 3 + [1] * 2
    assert data.scores.system.tolist() == [0, 1, 2, 0, 1]
    assert data.scores.score.tolist() == [10, 20, 30, 40, 50]


def test_load_ranking_input_leaves_out_flagged_and_excluded():
    campaign, systems, items = make_system_set(systems=3, items=3)
    outputs = [list(item.outputs.all()) for item in items]
    make_judged_hit(outputs[0], [1, 2, 3])
    flagged = make_judged_hit(outputs[1], [1, 2, 3])
    Assignment.objects.filter(pk=flagged.pk).update(flag=Assignment.Flag.TOO_FAST)
    excluded = make_annotator(campaign, is_excluded=True)
    make_judged_hit(outputs[2], [1, 2, 3], annotator=excluded)
    assert load_ranking_input(campaign.criteria.get(name="quality")).hits == 1


def test_execute_run_stores_results_best_first():
    campaign, systems = judged_campaign()
    run = quality_run(campaign, protocol="e2e", repetitions=50, seed=3)
    assert execute_run(run)
    run.refresh_from_db()
    assert run.status == "done" and run.progress == 50
    assert (run.hits, run.judgments, run.comparisons) == (30, 90, 90)
    names = [r.system.name for r in run.results.order_by("position")]
    assert names == ["sys1", "sys2", "sys3"]
    first = run.results.get(position=1)
    assert first.cluster == 1 and first.rank_lo == 1 and first.comparisons == 60
    assert run.note == "" and first.ci_lo is None and first.sigma is not None


# Four systems in 24 HITs, each by its own annotator: sys1 clearly first, sys2 and sys3
# alike (sys2 slightly ahead), sys4 clearly last, with a few upsets.
KNOWN_ORDER_HITS = [[300, 120, 80, 10]] * 11 + [[300, 80, 120, 10]] * 9
KNOWN_ORDER_HITS += [[90, 100, 80, 10], [90, 80, 100, 10], [300, 5, 100, 10], [300, 100, 5, 10]]


def known_order_campaign():
    """KNOWN_ORDER_HITS, the scores of each HIT in the order of its systems' names."""
    hits = KNOWN_ORDER_HITS
    campaign, systems, items = make_system_set(systems=4, items=len(hits))
    for item, scores in zip(items, hits, strict=True):
        make_judged_hit(list(item.outputs.order_by("system__name")), scores)
    return campaign


def results_of(run: RankingRun) -> list[tuple]:
    return list(
        run.results.order_by("position").values_list(
            "system__name", "cluster", "rank_lo", "rank_hi", "comparisons"
        )
    )


def test_execute_run_bradley_terry_stores_joint_claims_and_intervals():
    run = quality_run(known_order_campaign(), protocol="bt", repetitions=200)
    assert execute_run(run)
    run.refresh_from_db()
    assert (run.status, run.progress, run.comparisons) == ("done", 200, 144)
    assert results_of(run) == [
        ("sys1", 1, 1, 1, 72),
        ("sys2", 2, 2, 3, 72),  # neither claimed better than the other: ranks 2 to 3 both
        ("sys3", 2, 2, 3, 72),
        ("sys4", 3, 4, 4, 72),
    ]
    # The pairs stored: sys1 above every other, sys4 below every other, sys2-sys3 open.
    names = dict(run.results.values_list("system_id", "system__name"))
    claimed = {
        (names[a], names[b]) if c > 0 else (names[b], names[a])
        for a, b, _, _, _, c in run.pairs["rows"]
        if c
    }
    assert claimed == {("sys1", s) for s in ("sys2", "sys3", "sys4")} | {
        ("sys2", "sys4"),
        ("sys3", "sys4"),
    }
    for row in run.results.all():
        assert row.ci_lo < row.mu < row.ci_hi and row.mu_std > 0 and row.sigma is None
    assert sum(row.mu for row in run.results.all()) == pytest.approx(4000.0)
    # Resamples that drew none of sys1's two losses needed virtual draws; the data did not.
    assert run.note.startswith("In ") and " of 200 resamples, some systems never lost" in run.note


def mean_z_of_sys1(hits: list[list[int]]) -> float:
    """WMT's mean z of sys1, by the standard library: each HIT has its own annotator, so a
    score's z is taken within its HIT (sample standard deviation, as WMT's). By hand: the 20
    HITs (300, 120, 80, 10) in either order give sys1 z = 172.5 / 123.66 = 1.3950, the two
    (90, 100, 80, 10) ones 20 / 40.82 = 0.4899, the two (300, 100, 5, 10) ones
    196.25 / 137.92 = 1.4229: (20 * 1.3950 + 2 * 0.4899 + 2 * 1.4229) / 24 = 1.3219."""
    return statistics.mean((hit[0] - statistics.mean(hit)) / statistics.stdev(hit) for hit in hits)


def test_execute_run_wmt_stores_mean_z_and_wilcoxon_clusters():
    run = quality_run(known_order_campaign(), protocol="wmt")
    assert execute_run(run)
    run.refresh_from_db()
    assert (run.status, run.judgments, run.hits) == ("done", 96, 24)
    assert results_of(run) == [
        ("sys1", 1, 1, 1, 24),
        ("sys2", 2, 2, 3, 24),
        ("sys3", 2, 2, 3, 24),
        ("sys4", 3, 4, 4, 24),
    ]
    best = run.results.get(position=1)
    assert best.mu == pytest.approx(mean_z_of_sys1(KNOWN_ORDER_HITS), rel=1e-9)
    assert (best.sigma, best.mu_std, best.ci_lo, best.ci_hi) == (None, None, None, None)


def test_execute_run_wmt_without_z_scores_finds_nothing_to_rank_and_says_why():
    campaign, systems, items = make_system_set(systems=3, items=2)
    for item in items:  # each annotator gives every output the same score
        make_judged_hit(list(item.outputs.all()), [100, 100, 100])
    run = quality_run(campaign, protocol="wmt")
    execute_run(run)
    run.refresh_from_db()
    assert run.status == "done" and run.found_nothing_to_rank and run.error == ""
    assert "no z-scores yet" in run.note
    assert not run.results.exists()


def test_execute_run_same_seed_same_results():
    campaign, _ = judged_campaign()
    mus = []
    for _ in range(2):
        run = quality_run(campaign, repetitions=20, seed=9)
        execute_run(run)
        mus.append([r.mu for r in run.results.order_by("position")])
    assert mus[0] == mus[1]


def test_execute_run_without_judgments_finds_nothing_to_rank_and_keeps_previous_results():
    campaign, _ = judged_campaign(hits=5)
    good = quality_run(campaign)
    execute_run(good)
    empty = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="naturalness"), repetitions=10
    )
    execute_run(empty)
    empty.refresh_from_db()
    assert empty.status == "done" and empty.found_nothing_to_rank
    assert "no comparisons yet" in empty.note
    assert not empty.results.exists()
    assert RankingRun.objects.finished().get() == good


def test_execute_run_is_claimed_once():
    campaign, _ = judged_campaign(hits=5)
    run = quality_run(campaign)
    assert execute_run(run)
    assert not execute_run(run)
    assert run.results.count() == 3


def test_execute_run_takes_over_a_run_whose_worker_died():
    campaign, _ = judged_campaign(hits=5)
    long_ago = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    dead = quality_run(campaign, status="running", heartbeat_at=long_ago)
    busy = quality_run(campaign, status="running", heartbeat_at=timezone.now())
    assert execute_run(dead)
    assert not execute_run(busy)
    dead.refresh_from_db()
    busy.refresh_from_db()
    assert (dead.status, dead.results.count(), dead.attempts) == ("done", 3, 1)
    assert (busy.status, busy.results.count()) == ("running", 0)


def test_store_results_of_a_worker_that_lost_its_claim_writes_nothing():
    """The race: a stalled worker's run is taken over and finished by another; the first
    one finishes late and must neither store results nor turn the run into a failure."""
    campaign, _ = judged_campaign(hits=5)
    run = quality_run(campaign, protocol="e2e")
    stalled_token = run.claim()
    RankingRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    )
    assert execute_run(RankingRun.objects.get(pk=run.pk))  # the second worker takes over
    criterion = campaign.criteria.get(name="quality")
    data = load_ranking_input(criterion)
    ranking = summarise(e2e_protocol(data.comparisons, len(data.systems), 10, seed=0))
    agreement = measure(criterion, seed=0)
    with pytest.raises(ClaimLost):
        store_results(run, stalled_token, data, ranking, 0.0, 0.0, agreement)
    run.refresh_from_db()
    assert (run.status, run.results.count(), run.error) == ("done", 3, "")
    assert RunAgreement.objects.filter(run=run).count() == 1  # the second worker's


def test_execute_run_gives_up_on_a_run_that_keeps_killing_its_workers():
    campaign, _ = judged_campaign(hits=5)
    long_ago = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    run = quality_run(
        campaign, status="running", heartbeat_at=long_ago, attempts=settings.JOB_MAX_ATTEMPTS
    )
    assert not execute_run(run)
    run.refresh_from_db()
    assert run.status == "failed" and "gave up after" in run.error


# The sweep ----------------------------------------------------------------------------------


def test_sweep_queues_one_run_per_protocol_for_changed_judgments(
    django_capture_on_commit_callbacks,
):
    campaign, _ = judged_campaign(hits=3)
    with django_capture_on_commit_callbacks() as sent:
        queued = queue_due_rankings()
    # One per view that fits RankME: e2e, bootstrap, bt, wmt, bws.
    assert sorted((r.criterion.name, r.protocol) for r in queued) == sorted(
        ("quality", protocol) for protocol in RANKME_VIEWS
    )
    # One message for all, once committed: its worker reads the judgments once for every
    # view. The calibrated verdict comes first, those that repeat TrueSkill over every
    # comparison last.
    assert len(sent) == 1
    assert [r.protocol for r in queued] == ["calibrated", "bt", "wmt", "bws", "e2e", "bootstrap"]
    assert queue_due_rankings() == []  # they are waiting: nothing more


def test_sweep_asks_two_queries_per_criterion_whatever_the_number_of_protocols(
    django_assert_num_queries,
):
    campaign, _ = judged_campaign(hits=3)
    criterion = campaign.criteria.get(name="quality")
    # Two for the runs, and one whether the criterion has a fused judge: the fused view fits
    # RankME's form, and is due if it has one.
    with django_assert_num_queries(3):
        assert due_protocols(criterion) == RANKME_VIEWS


def test_sweep_leaves_out_the_protocols_whose_run_is_waiting():
    campaign, _ = judged_campaign(hits=3)
    long_ago = timezone.now() - timedelta(hours=1)
    quality_run(campaign, protocol="bt", status="running", heartbeat_at=timezone.now())
    quality_run(campaign, protocol="wmt", status="running", heartbeat_at=long_ago)
    RankingRun.objects.update(queued_at=long_ago)
    # The abandoned WMT run is not waiting: its worker is gone, so a new run is queued.
    due = due_protocols(campaign.criteria.get(name="quality"))
    assert due == ["calibrated", "e2e", "bootstrap", "wmt", "bws"]


def test_sweep_waits_out_the_debounce_then_queues_for_newer_judgments(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 60
    campaign, _ = judged_campaign(hits=3)
    for run in queue_due_rankings():
        execute_run(run)
    outputs = list(campaign.items.first().outputs.all())
    make_judged_hit(outputs, [1, 2, 3])
    assert queue_due_rankings() == []  # the last run was queued less than 60 s ago
    RankingRun.objects.update(queued_at=timezone.now() - timedelta(seconds=61))
    again = queue_due_rankings()
    assert len(again) == len(RANKME_VIEWS)
    task = campaign.criteria.get(name="quality")
    execute_run(again[0])
    again[0].refresh_from_db()
    assert again[0].judgments_version == task.judgments_version
    assert again[0].hits == 4


def test_sweep_leaves_criteria_alone_whose_runs_cover_their_judgments():
    campaign, _ = judged_campaign(hits=3)
    for run in queue_due_rankings():
        execute_run(run)
    RankingRun.objects.update(queued_at=timezone.now() - timedelta(hours=1))
    assert queue_due_rankings() == []


def test_sweep_counts_a_run_with_nothing_to_rank_as_covering_its_input():
    """Otherwise a criterion that cannot be ranked yet would be queued on every sweep."""
    campaign, _ = judged_campaign(hits=1)
    naturalness = campaign.criteria.get(name="naturalness")
    CampaignCriterion.objects.filter(pk=naturalness.pk).record_judgments_change()
    runs = [r for r in queue_due_rankings() if r.criterion.name == "naturalness"]
    for run in runs:
        execute_run(run)
    RankingRun.objects.update(queued_at=timezone.now() - timedelta(hours=1))
    assert [r.outcome for r in RankingRun.objects.filter(criterion__name="naturalness")] == [
        "Nothing to rank"
    ] * len(RANKME_VIEWS)
    assert queue_due_rankings() == []


def test_sweep_sends_again_runs_whose_message_or_worker_was_lost(
    django_capture_on_commit_callbacks,
):
    campaign, _ = judged_campaign(hits=1)
    long_ago = timezone.now() - timedelta(hours=1)
    unsent = quality_run(campaign)
    lost = quality_run(campaign, sent_at=long_ago)
    just_sent = quality_run(campaign, sent_at=timezone.now())
    abandoned = quality_run(campaign, status="running", heartbeat_at=long_ago)
    alive = quality_run(campaign, status="running", heartbeat_at=timezone.now())
    needing = set(RankingRun.objects.needing_a_worker())
    assert needing == {unsent, lost, abandoned}
    assert just_sent not in needing and alive not in needing
    assert set(RankingRun.objects.pending()) == {unsent, lost, just_sent, alive}


def add_judged_hits(campaign, systems, scores: list[int], hits: int) -> None:
    """`hits` more HITs over the campaign's systems, each on a new item, scored `scores`."""
    for _ in range(hits):
        item = make_item(campaign)
        outputs = [make_output(item, system) for system in systems]
        make_judged_hit(outputs, scores)


def verdict_of(campaign) -> RankingRun:
    run = quality_run(campaign, protocol="calibrated", repetitions=200, seed=5)
    assert execute_run(run)
    run.refresh_from_db()
    return run


def test_a_criterion_closes_once_its_clusters_stay_the_same_for_its_hits():
    campaign, systems, _ = make_system_set(systems=3, items=0)
    criterion = campaign.criteria.get(name="quality")
    criterion.close_when_stable_for = 20
    criterion.save(update_fields=["close_when_stable_for"])
    add_judged_hits(campaign, systems, [120, 100, 40], 30)
    first = verdict_of(campaign)
    assert sorted(clusters_of(first).values()) == [1, 2, 3]
    add_judged_hits(campaign, systems, [120, 100, 40], 10)
    verdict_of(campaign)
    criterion.refresh_from_db()
    assert (criterion.clusters_stable_since, criterion.is_open) == (30, True)  # 10 of 20
    add_judged_hits(campaign, systems, [120, 100, 40], 10)
    verdict_of(campaign)
    criterion.refresh_from_db()
    assert (criterion.clusters_stable_since, criterion.is_open) == (30, False)
    assert criterion.closed_as_stable_since == 30
    assert next_assignment(make_annotator(campaign), criterion) is None
    # Reopened by the organiser: the same clusters do not close it again.
    criterion.is_open = True
    criterion.save(update_fields=["is_open"])
    add_judged_hits(campaign, systems, [120, 100, 40], 10)
    verdict_of(campaign)
    criterion.refresh_from_db()
    assert (criterion.clusters_stable_since, criterion.is_open) == (30, True)


def test_clusters_that_change_start_the_count_again_and_other_protocols_do_not_count():
    campaign, systems, _ = make_system_set(systems=3, items=0)
    criterion = campaign.criteria.get(name="quality")
    criterion.close_when_stable_for = 20
    criterion.save(update_fields=["close_when_stable_for"])
    add_judged_hits(campaign, systems, [120, 100, 100], 20)  # sys2 and sys3 tie
    assert sorted(clusters_of(verdict_of(campaign)).values()) == [1, 2, 2]
    add_judged_hits(campaign, systems, [120, 100, 40], 40)  # now sys2 is ahead of sys3
    changed = verdict_of(campaign)
    assert sorted(clusters_of(changed).values()) == [1, 2, 3]
    criterion.refresh_from_db()
    assert (criterion.clusters_stable_since, criterion.is_open) == (60, True)
    published = quality_run(campaign, protocol="e2e", repetitions=50)
    assert execute_run(published)
    criterion.refresh_from_db()
    assert criterion.clusters_stable_since == 60


def test_rank_input_of_400_e2e_hits_all_tied_is_one_cluster_or_nothing_to_rank():
    """E2E's first 400 quality HITs with every score 100, through the service's input and
    result rows: every system in cluster 1 with range 1-20, or (WMT) nothing to rank."""
    systems, scores, annotators = first_400_hits_all_100()
    rows = [
        (hit, int(annotators[hit]), int(system), float(score))
        for hit in range(len(systems))
        for system, score in zip(systems[hit], scores[hit], strict=True)
    ]
    data = ranking_input_from_rows(rows)
    assert (data.hits, data.judgments, len(data.systems)) == (400, 2000, 20)
    for protocol in ("e2e", "bootstrap", "bt"):
        lines = result_rows(data, rank_input(data, protocol, 50, 0), protocol)
        assert {(row.cluster, row.rank_lo, row.rank_hi) for row in lines} == {(1, 1, 20)}
    with pytest.raises(NothingToRank, match="no z-scores yet"):
        rank_input(data, "wmt", 50, 0)


# One read of the judgments for every view of a change -----------------------------------------


def judgment_reads(queries: CaptureQueriesContext) -> int:
    return sum('FROM "annotation_judgment"' in query["sql"] for query in queries)


def stored_rows(run: RankingRun) -> list[tuple]:
    fields = [f.name for f in SystemResult._meta.fields if f.name not in ("id", "run")]
    return list(run.results.order_by("position").values_list(*fields))


def test_execute_queued_runs_reads_the_judgments_once_for_every_view(settings):
    judged_campaign(hits=12)
    first, *others = queue_due_rankings()
    with CaptureQueriesContext(connection) as every_view:
        assert execute_queued_runs(first)
    assert set(RankingRun.objects.values_list("status", flat=True)) == {"done"}
    # The same reads as one view of a campaign alike: one stream of the judgments for the
    # rankings, the agreement and the hand-out's estimate, and the counts per system.
    alike, _ = judged_campaign(hits=12)
    with CaptureQueriesContext(connection) as one_view:
        assert execute_run(quality_run(alike, protocol="wmt"))
    assert judgment_reads(every_view) == judgment_reads(one_view) == 2
    in_ranking_order = 'ORDER BY "annotation_campaigncriterion"."name"'
    assert len([q for q in every_view if in_ranking_order in q["sql"]]) == 1


def test_agreement_and_estimate_from_the_shared_read_equal_their_own_reads():
    campaign, _ = judged_campaign(hits=15)
    second, excluded = make_annotator(campaign), make_annotator(campaign, is_excluded=True)
    for n, item in enumerate(campaign.items.order_by("pk")[:8]):  # units judged twice
        outputs = list(item.outputs.order_by("system__name"))
        make_judged_hit(outputs, [110 + n, 90, 50 + 3 * n], annotator=second)
        make_judged_hit(outputs, [5, 1 + n, 9], annotator=excluded)
    first, *others = queue_due_rankings()
    assert execute_queued_runs(first)
    criterion = campaign.criteria.get(name="quality")
    shared_estimates = criterion.estimates
    assert shared_estimates and reset_estimates(criterion)
    criterion.refresh_from_db()
    assert criterion.estimates == shared_estimates
    stored = RunAgreement.objects.get(run=first)
    alone = measure(criterion, seed=0).agreement.alpha
    assert (stored.alpha, stored.alpha_low, stored.alpha_high) == (
        alone.value,
        alone.low,
        alone.high,
    )
    assert (stored.units, stored.judgments) == (alone.units, alone.judgments)
    assert stored.alpha is not None and stored.units == 24
    per_annotator = AnnotatorAgreement.objects.filter(run=first).order_by("annotator_id")
    assert len(per_annotator) == 15 + 2 and per_annotator.get(annotator=excluded).excluded


def test_views_ranked_from_one_read_store_what_each_read_alone_stores():
    campaign, _ = judged_campaign(hits=20)
    together = queue_due_rankings()
    assert execute_queued_runs(together[0])
    for run in together:
        alone = quality_run(campaign, protocol=run.protocol, repetitions=run.repetitions)
        assert execute_run(alone)
        run.refresh_from_db()
        alone.refresh_from_db()
        assert (run.status, alone.status) == ("done", "done")
        assert stored_rows(run) == stored_rows(alone) != []
        assert run.judgments_version == alone.judgments_version


def test_execute_queued_runs_leaves_a_run_another_worker_holds():
    judged_campaign(hits=6)
    first, taken, *others = queue_due_rankings()
    token = taken.claim()
    assert execute_queued_runs(first)
    taken.refresh_from_db()
    assert (taken.status, taken.claim_token) == ("running", token)
    assert {run.status for run in RankingRun.objects.exclude(pk=taken.pk)} == {"done"}


def test_execute_queued_runs_of_a_run_another_worker_has_does_nothing():
    judged_campaign(hits=6)
    first, *others = queue_due_rankings()
    first.claim()
    assert not execute_queued_runs(first)
    assert {run.status for run in RankingRun.objects.exclude(pk=first.pk)} == {"queued"}


def test_shared_read_reads_again_once_the_judgments_changed(django_assert_num_queries):
    campaign, _ = judged_campaign(hits=4)
    criterion = campaign.criteria.get(name="quality")
    shared = SharedRead()
    loaded = shared.of(criterion)
    with django_assert_num_queries(0):
        assert shared.of(criterion) is loaded
    make_judged_hit(list(campaign.items.first().outputs.all()), [1, 2, 3])
    criterion.refresh_from_db()
    again = shared.of(criterion)
    assert (again.version, again.data.hits) == (loaded.version + 1, loaded.data.hits + 1)


def test_trueskill_runs_fall_back_from_a_failing_gpu_to_the_same_rows(settings, monkeypatch):
    """RANKING_GPU=auto where the GPU path fails (here: no driver) stores what the CPU does."""
    from ranking.engine import trueskill_cuda, trueskill_runs  # noqa: PLC0415 - as the engine does

    def no_driver(*args):
        raise RuntimeError("CUDA driver library cannot be found")

    campaign, _ = judged_campaign(hits=20)
    stored = []
    for mode in ("off", "auto"):
        settings.RANKING_GPU = mode
        monkeypatch.setattr(trueskill_runs, "gpu_available", lambda: True)
        monkeypatch.setattr(trueskill_cuda, "e2e_kernel", no_driver)
        run = quality_run(campaign, protocol="e2e", repetitions=24, seed=7)
        assert execute_run(run)
        stored.append(stored_rows(run))
    assert stored[0] == stored[1] != []


@pytest.mark.parametrize("protocol", ["e2e", "bootstrap"])
def test_trueskill_runs_on_any_number_of_threads_store_the_same_rows(settings, protocol):
    campaign, _ = judged_campaign(hits=20)
    stored = []
    for count in (1, 2, 3):
        settings.RANKING_PROCESSES = count
        run = quality_run(campaign, protocol=protocol, repetitions=24, seed=7)
        assert execute_run(run)
        stored.append(stored_rows(run))
    assert stored[0] == stored[1] == stored[2] != []


def test_runs_waiting_for_the_worker_of_their_batch_are_not_sent_to_another():
    judged_campaign(hits=3)
    first, *waiting = queue_due_rankings()
    RankingRun.objects.update(sent_at=timezone.now() - timedelta(hours=1))
    assert set(RankingRun.objects.needing_a_worker()) == {first, *waiting}
    with KeptAsSent(first, {first.pk}):
        assert set(RankingRun.objects.needing_a_worker()) == {first}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ranking_input_from_an_array_equals_the_one_from_rows(seed):
    rng = np.random.default_rng(seed)
    rows = []
    for assignment in rng.permutation(200)[:60] + 1000:  # ids in no particular order
        annotator = int(rng.integers(50, 60))
        for system in rng.choice(np.arange(500, 512), size=rng.integers(1, 6), replace=False):
            score = float(rng.integers(0, 4))  # ties and draws too
            rows.append((int(assignment), annotator, 7, int(system), score, True, 0))
    array = np.array(rows, dtype=JUDGMENT_ROW)
    fast = ranking_input_from_array(array)
    slow = ranking_input_from_rows([(a, n, s, x, i) for a, n, i, s, x, _, _ in rows])
    assert (fast.systems, fast.judgments, fast.hits) == (slow.systems, slow.judgments, slow.hits)
    for name in ("winner", "loser", "draw"):
        assert np.array_equal(getattr(fast.comparisons, name), getattr(slow.comparisons, name))
    for name in ("system", "annotator", "score", "hit", "item"):
        assert np.array_equal(getattr(fast.scores, name), getattr(slow.scores, name))
        assert getattr(fast.scores, name).dtype == getattr(slow.scores, name).dtype


def test_ranking_input_from_no_rows_is_empty():
    empty = ranking_input_from_array(np.zeros(0, dtype=JUDGMENT_ROW))
    assert (empty.systems, empty.judgments, empty.hits) == ([], 0, 0)
