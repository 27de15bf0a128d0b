"""A judge through the real worker: its job, on the generation queue, scores every output
and stores the fused ranking beside the humans-only one (PostgreSQL and Redis in CI)."""

import pytest
from django.db import transaction

from judges.fusion import scores_for_criterion
from judges.models import Judge, JudgeJob
from judges.service import request_judging
from ranking.models import RankingRun
from tests.conftest import wait_until
from tests.factories import make_annotator, make_judged_hit, make_system_set

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def test_a_judge_job_runs_on_the_worker_and_stores_the_fused_ranking(celery_worker_process):
    campaign, systems, items = make_system_set(systems=3, items=5)
    annotator = make_annotator(campaign)
    for n, item in enumerate(items):
        outputs = [item.outputs.get(system=s) for s in systems]
        make_judged_hit(outputs, [90.0 - n, 60.0 + n, 30.0 + n], annotator)
    judge = Judge.objects.create(
        criterion=campaign.criteria.get(name="quality"),
        name="bleu",
        kind="metric",
        settings={"metric": "bleu"},
    )
    with transaction.atomic():
        job = request_judging(judge)
    done = wait_until(
        lambda: JudgeJob.objects.filter(pk=job.pk, status="done").first(),
        timeout=240,  # a cold numba cache compiles first, on cores the other tests share
        message="the worker did not run the judge job",
    )
    assert (done.outputs_total, done.outputs_done, done.outputs_failed) == (15, 15, 0)
    judge.refresh_from_db()
    assert judge.scores.count() == 15
    rows = judge.summary["ranking"]
    assert sorted(row["system"] for row in rows) == sorted(s.name for s in systems)
    assert all(row["judgments"] == 5 for row in rows)
    assert judge.summary["agreement"]["outputs"] == 15


def test_a_fused_judges_job_has_the_worker_rank_the_fused_view_with_its_scores(
    celery_worker_process,
):
    # All at once, with the other views' runs covering the judgments: the worker (one
    # process) then has only the judge's job and the fused view to do, not TrueSkill's runs.
    with transaction.atomic():
        campaign, systems, items = make_system_set(systems=3, items=6)
        annotator = make_annotator(campaign)
        for n, item in enumerate(items):
            outputs = [item.outputs.get(system=s) for s in systems]
            make_judged_hit(outputs, [90.0 - n, 60.0 + 2 * n, 30.0 + n], annotator)
        criterion = campaign.criteria.get(name="quality")
        for protocol in ("e2e", "bootstrap", "bt", "wmt", "bws"):
            RankingRun.objects.create(
                campaign=campaign,
                criterion=criterion,
                protocol=protocol,
                status=RankingRun.Status.DONE,
                judgments_version=criterion.judgments_version,
            )
        judge = Judge.objects.create(
            criterion=criterion, name="chrf", kind="metric", settings={"metric": "chrf"}, fused=True
        )
        request_judging(judge)
    # The judge's job ends by requesting the fused view; the worker ranks it with the scores.
    run = wait_until(
        lambda: RankingRun.objects.filter(
            criterion=judge.criterion,
            protocol="fused",
            status="done",
            judge_version__contains=":18:",
        ).first(),
        timeout=240,  # a cold numba cache compiles first, on cores the other tests share
        message="the worker did not rank the fused view with the judge's scores",
    )
    assert run.judge_version == scores_for_criterion(judge.criterion).version
    assert run.results.count() == 3 and run.note.startswith("Judge chrf: weight")
    assert sorted(run.results.values_list("comparisons", flat=True)) == [6, 6, 6]
