import numpy as np
import pytest

from annotation.models import Assignment
from ranking.models import RankingRun
from ranking.service import execute_run, load_ranking_input
from tests.factories import make_annotator, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db


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


def test_load_ranking_input_numbers_systems_by_first_appearance():
    campaign, systems, items = make_system_set(systems=3, items=2)
    first = list(items[0].outputs.order_by("system__name"))
    make_judged_hit([first[2], first[0], first[1]], [10, 20, 20])
    data = load_ranking_input(campaign, "quality")
    assert data.system_ids == [systems[2].pk, systems[0].pk, systems[1].pk]
    assert (data.hits, data.judgments, len(data.comparisons.winner)) == (1, 3, 3)
    assert data.comparisons.draw.sum() == 1


def test_load_ranking_input_leaves_out_flagged_and_excluded():
    campaign, systems, items = make_system_set(systems=3, items=3)
    outputs = [list(item.outputs.all()) for item in items]
    make_judged_hit(outputs[0], [1, 2, 3])
    flagged = make_judged_hit(outputs[1], [1, 2, 3])
    Assignment.objects.filter(pk=flagged.pk).update(flag=Assignment.Flag.TOO_FAST)
    excluded = make_annotator(campaign, is_excluded=True)
    make_judged_hit(outputs[2], [1, 2, 3], annotator=excluded)
    assert load_ranking_input(campaign, "quality").hits == 1


def test_execute_run_stores_results_best_first():
    campaign, systems = judged_campaign()
    run = RankingRun.objects.create(campaign=campaign, criterion="quality", runs=50, seed=3)
    assert execute_run(run)
    run.refresh_from_db()
    assert run.status == "done" and run.progress == 50
    assert (run.hits, run.judgments, run.comparisons) == (30, 90, 90)
    names = [r.system.name for r in run.results.order_by("position")]
    assert names == ["sys1", "sys2", "sys3"]
    first = run.results.get(position=1)
    assert first.cluster == 1 and first.rank_lo == 1 and first.comparisons == 60


def test_execute_run_same_seed_same_results():
    campaign, _ = judged_campaign()
    mus = []
    for _ in range(2):
        run = RankingRun.objects.create(campaign=campaign, criterion="quality", runs=20, seed=9)
        execute_run(run)
        mus.append([r.mu for r in run.results.order_by("position")])
    assert mus[0] == mus[1]


def test_execute_run_without_judgments_fails_and_keeps_previous_results():
    campaign, _ = judged_campaign(hits=5)
    good = RankingRun.objects.create(campaign=campaign, criterion="quality", runs=10)
    execute_run(good)
    empty = RankingRun.objects.create(campaign=campaign, criterion="naturalness", runs=10)
    execute_run(empty)
    empty.refresh_from_db()
    assert empty.status == "failed" and "no comparisons yet" in empty.error
    assert not empty.results.exists()
    assert RankingRun.objects.finished().get() == good


def test_execute_run_is_claimed_once():
    campaign, _ = judged_campaign(hits=5)
    run = RankingRun.objects.create(campaign=campaign, criterion="quality", runs=10)
    assert execute_run(run)
    assert not execute_run(run)
    assert run.results.count() == 3


def test_execute_run_takes_over_a_run_whose_worker_died(settings):
    from datetime import timedelta

    from django.utils import timezone

    campaign, _ = judged_campaign(hits=5)
    long_ago = timezone.now() - timedelta(minutes=settings.RANKING_STALE_MINUTES + 1)
    dead = RankingRun.objects.create(
        campaign=campaign, criterion="quality", runs=10, status="running", started_at=long_ago
    )
    busy = RankingRun.objects.create(
        campaign=campaign, criterion="quality", runs=10, status="running", started_at=timezone.now()
    )
    assert execute_run(dead)
    assert not execute_run(busy)
    dead.refresh_from_db()
    busy.refresh_from_db()
    assert (dead.status, dead.results.count()) == ("done", 3)
    assert (busy.status, busy.results.count()) == ("running", 0)
