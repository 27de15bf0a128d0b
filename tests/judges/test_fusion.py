"""The organiser's switch (Judge.fused): a criterion run as humans + judge gets the ranking's
fused view (ranking/protocols/fused.py), fed the judge's scores through
RANKING_JUDGE_SCORES (judges/fusion.py), and ranked again whenever those scores change."""

import json

import numpy as np
import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotation.models import Judgment
from judges.fusion import scores_for_criterion
from judges.models import Judge, JudgeJob, JudgeScore
from judges.service import refresh_summary, run_judge_job
from ranking.batch import execute_queued_runs
from ranking.engine.fusion import fused_ranking, humans_only_ranking
from ranking.export import write_csv
from ranking.models import RankingRun
from ranking.protocols.fused import standardised
from ranking.service import (
    execute_run,
    fitting_protocols,
    queue_due_rankings,
    request_judged_rankings,
)
from tests.factories import make_annotator, make_item, make_judged_hit, make_output, make_system_set

pytestmark = pytest.mark.django_db


def crowd_and_judge(items: int = 12, fused: bool = True, seed: int = 3):
    """Three systems (sys1 best) judged by two annotators on every item, with noise; a
    judge that scores every output, agreeing with the crowd up to noise; and outputs
    nobody judged, which the judge scores too."""
    rng = np.random.default_rng(seed)
    campaign, systems, item_rows = make_system_set(systems=3, items=items)
    judge = Judge.objects.create(
        criterion=campaign.criteria.get(name="quality"),
        name="oracle",
        kind="metric",
        settings={"metric": "ser"},
        fused=fused,
    )
    annotators = [make_annotator(campaign), make_annotator(campaign)]
    for n, item in enumerate(item_rows):
        outputs = [item.outputs.get(system=s) for s in systems]
        quality = np.array([80.0, 60.0, 40.0]) + rng.normal(0, 12, 3)
        if n % 3:  # a third of the items left to the judge alone
            make_judged_hit(outputs, list(np.round(quality)), annotators[n % 2])
        for output, q in zip(outputs, quality, strict=True):
            JudgeScore.objects.create(judge=judge, output=output, score=q + rng.normal(0, 5))
    return judge, systems


def fused_run(judge) -> RankingRun:
    criterion = judge.criterion
    return RankingRun.objects.create(
        campaign_id=criterion.campaign_id, criterion=criterion, protocol="fused", repetitions=10
    )


def test_the_fused_view_stores_what_the_engine_computes_on_the_same_judgments():
    judge, systems = crowd_and_judge()
    run = fused_run(judge)
    assert execute_run(run)
    run.refresh_from_db()
    assert (run.status, run.note[:13]) == ("done", "Judge oracle:")
    assert run.judge_version == scores_for_criterion(judge.criterion).version
    # The engine on arrays read here, systems and outputs in an order of their own.
    scored = list(
        judge.scores.order_by("-output_id").values_list("output_id", "output__system_id", "score")
    )
    index = {output: i for i, (output, _, _) in enumerate(scored)}
    number = {system.pk: i for i, system in enumerate(systems)}
    judged = list(
        Judgment.objects.filter(criterion=judge.criterion).values_list(
            "slot__output_id", "assignment__annotator_id", "score"
        )
    )
    output_system = np.array([number[system] for _, system, _ in scored])
    humans = (
        np.array([index[output] for output, _, _ in judged]),
        np.array([annotator for _, annotator, _ in judged]),
        np.array([score for _, _, score in judged], dtype=float),
        3,
    )
    f = standardised(np.array([score for _, _, score in scored]))
    fused = fused_ranking(output_system, f, *humans)
    alone = humans_only_ranking(output_system, *humans)
    rows = list(run.results.order_by("position"))
    assert [row.system_id for row in rows] == [systems[i].pk for i in fused.order]
    for row in rows:
        s = number[row.system_id]
        assert row.mu == pytest.approx(fused.estimate[s], abs=1e-12)
        assert (row.ci_lo, row.ci_hi) == pytest.approx((fused.lower[s], fused.upper[s]), abs=1e-12)
        assert (row.rank_lo, row.rank_hi, row.cluster) == (
            fused.rank_lo[s],
            fused.rank_hi[s],
            fused.cluster[s],
        )
        assert row.comparisons == fused.judgments[s] == 8
        assert row.effective_judgments == pytest.approx(fused.effective_judgments[s])
        assert (row.humans_ci_lo, row.humans_ci_hi) == pytest.approx(
            (alone.lower[s], alone.upper[s]), abs=1e-12
        )
    # The judge tracks the crowd: narrower than the humans alone, worth more judgments (on
    # the whole: one weight for all systems may widen one a little).
    assert sum(row.ci_hi - row.ci_lo for row in rows) < sum(
        row.humans_ci_hi - row.humans_ci_lo for row in rows
    )
    assert sum(row.effective_judgments for row in rows) > 3 * 8


def test_the_fused_view_writes_its_csv_columns():
    judge, systems = crowd_and_judge()
    run = fused_run(judge)
    execute_run(run)

    class Lines(list):
        def write(self, text):
            self.append(text)

    out = Lines()
    write_csv(out, run)
    header, first = "".join(out).splitlines()[:2]
    assert header.startswith("cluster,system,fused_mean_z,ci_lo,ci_hi,rank_lo,rank_hi,judgments")
    assert header.endswith("effective_judgments,humans_only_ci_lo,humans_only_ci_hi")
    assert len(first.split(",")) == 11


def test_without_a_fused_judge_the_fused_view_neither_fits_nor_runs():
    judge, _ = crowd_and_judge(fused=False)
    criterion = judge.criterion
    assert "fused" not in fitting_protocols(criterion)
    assert scores_for_criterion(criterion) is None
    assert "fused" not in {run.protocol for run in queue_due_rankings()}
    assert request_judged_rankings(criterion) == []
    run = fused_run(judge)  # asked for all the same: nothing to rank, and says why
    assert execute_run(run)
    run.refresh_from_db()
    assert run.found_nothing_to_rank and "no fused judge" in run.note


def test_with_a_fused_judge_the_sweep_queues_the_fused_view_with_the_others():
    judge, _ = crowd_and_judge()
    assert "fused" in fitting_protocols(judge.criterion)
    queued = queue_due_rankings()
    assert "fused" in {run.protocol for run in queued}
    assert execute_queued_runs(queued[0])
    done = RankingRun.objects.get(protocol="fused")
    assert done.status == "done" and done.results.count() == 3


def test_a_finished_judge_job_requests_the_fused_view_once_per_version_of_its_scores(
    django_capture_on_commit_callbacks,
):
    judge, systems = crowd_and_judge()
    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert run_judge_job(JudgeJob.objects.create(judge=judge))  # nothing new to score
    first = RankingRun.objects.get(protocol="fused")
    assert first.status == "queued" and len(sent) == 1
    assert execute_run(first)
    first.refresh_from_db()
    assert request_judged_rankings(judge.criterion) == []  # the same scores: ranked already
    # New outputs, scored by the judge's next job: the judgments are the same, the scores not.
    item = make_item(judge.criterion.campaign)
    JudgeScore.objects.create(judge=judge, output=make_output(item, systems[0]), score=70.0)
    (again,) = request_judged_rankings(judge.criterion)
    assert again.protocol == "fused" and again.pk != first.pk
    assert execute_run(again)
    again.refresh_from_db()
    assert again.judgments_version == first.judgments_version  # the same judgments
    assert again.judge_version != first.judge_version
    assert again.judge_version == scores_for_criterion(judge.criterion).version


def test_one_fused_judge_per_criterion():
    judge, _ = crowd_and_judge()
    with pytest.raises(IntegrityError), transaction.atomic():
        Judge.objects.create(criterion=judge.criterion, name="other", kind="metric", fused=True)
    other = Judge.objects.create(criterion=judge.criterion, name="other", kind="metric")
    assert scores_for_criterion(judge.criterion).name == "oracle"
    Judge.objects.filter(pk=judge.pk).update(fused=False)
    Judge.objects.filter(pk=other.pk).update(fused=True)
    switched = scores_for_criterion(judge.criterion)
    assert switched.name == "other" and switched.read_scores()[0].tolist() == []


def test_admin_switch_runs_the_criterion_as_humans_plus_judge(
    organiser, django_capture_on_commit_callbacks
):
    judge, _ = crowd_and_judge(fused=False)
    change = reverse("admin:judges_judge_change", args=[judge.pk])
    fields = {
        "criterion": judge.criterion_id,
        "name": judge.name,
        "kind": judge.kind,
        "settings": json.dumps(judge.settings),
        "batch_size": judge.batch_size,
    }
    with django_capture_on_commit_callbacks(execute=False):
        response = organiser.submit(organiser.get(change), {**fields, "fused": "on"}, action=change)
    assert response.status_code == 302
    judge.refresh_from_db()
    assert judge.fused
    assert RankingRun.objects.filter(protocol="fused", status="queued").count() == 1
    # A second fused judge of the criterion is refused, saying why.
    add = reverse("admin:judges_judge_add")
    refused = organiser.submit(
        organiser.get(add), {**fields, "name": "second", "fused": "on"}, action=add
    )
    assert "has a fused judge already" in refused.content.decode()
    assert not Judge.objects.filter(name="second").exists()


def test_results_page_shows_the_fused_tab_its_table_and_the_intervals_narrowing(organiser):
    judge, systems = crowd_and_judge()
    criterion = judge.criterion
    url = reverse("ranking:results", args=[criterion.campaign.slug, criterion.name])
    assert execute_run(fused_run(judge))
    annotator = make_annotator(criterion.campaign)
    for item in criterion.campaign.items.order_by("pk")[:4]:  # more judgments, a second run
        outputs = [item.outputs.get(system=s) for s in systems]
        make_judged_hit(outputs, [75.0, 55.0, 45.0], annotator)
    assert execute_run(fused_run(judge))
    page = organiser.get(url, {"protocol": "fused"}).content.decode()
    assert '<a href="?protocol=fused" class="current" aria-current="page">' in page
    assert "Humans + judge (PPI++)" in page and 'id="fused-table"' in page
    newest = RankingRun.objects.filter(protocol="fused").order_by("-pk").first()
    first = newest.results.get(position=1)
    assert f"{first.mu:.3f} [{first.ci_lo:.3f}, {first.ci_hi:.3f}]" in page
    assert f"[{first.humans_ci_lo:.3f}, {first.humans_ci_hi:.3f}]" in page
    assert "Judge oracle: weight λ =" in page
    assert 'id="width-chart"' in page and "36 judgments: humans + judge" in page
    assert "What more judgments would settle" not in page  # no calibrated verdict yet
    verdict = RankingRun.objects.create(
        campaign=criterion.campaign, criterion=criterion, protocol="calibrated", repetitions=50
    )
    assert execute_run(verdict)
    page = organiser.get(url, {"protocol": "fused"}).content.decode()
    assert "What more judgments would settle" in page  # the verdict's forecast, on every tab
    csv_url = reverse("ranking:csv", args=[criterion.campaign.slug, criterion.name])
    assert organiser.get(csv_url, {"protocol": "fused"}).status_code == 200
    # Switched off: the tab goes, as a view that does not fit.
    Judge.objects.filter(pk=judge.pk).update(fused=False)
    assert 'href="?protocol=fused"' not in organiser.get(url).content.decode()


def test_results_page_shows_the_fused_judge_against_the_crowd_once_measured(organiser):
    judge, _ = crowd_and_judge()
    criterion = judge.criterion
    url = reverse("ranking:results", args=[criterion.campaign.slug, criterion.name])
    assert execute_run(fused_run(judge))
    page = organiser.get(url, {"protocol": "fused"}).content.decode()
    assert "The judge against the crowd" in page and "Not measured yet" in page
    assert 'id="judge-agreement"' not in page
    refresh_summary(judge)  # what the judge's job does when it finishes
    measured = Judge.objects.get(pk=judge.pk).summary["agreement"]
    page = organiser.get(url, {"protocol": "fused"}).content.decode()
    assert 'id="judge-agreement"' in page and "Not measured yet" not in page
    low, high = measured["intervals"]["output_pearson"]
    assert f"{measured['output_pearson']:.2f}</td>" in page
    assert f"[{low:.2f}, {high:.2f}]" in page
    assert f"{measured['pairs']} pairs" in page
    assert reverse("admin:judges_judge_change", args=[judge.pk]) in page
