"""The walks of docs/architecture.md, traced as the code runs (research/walk.py): a ranking
run as the worker runs it, and a judgment's submission from the annotator's POST to the
stored judgments. `pytest -n 0 -s tests/evalsite/test_walk.py` prints them."""

import sys
from pathlib import Path

import pytest

from ranking.protocols import DEFAULT
from ranking.tasks import compute_ranking
from tests.annotation.test_views import answers, hit_url, take_hit
from tests.ranking.test_service import judged_campaign, quality_run

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "research"))
from walk import Walk, count, report  # noqa: E402

pytestmark = pytest.mark.django_db


def test_a_ranking_run_walks_down_through_the_worker():
    campaign, _ = judged_campaign(hits=12)
    run = quality_run(campaign, protocol=DEFAULT)
    walk = Walk()
    walk.trace(lambda: compute_ranking(run_id=run.pk))
    run.refresh_from_db()
    assert run.status == "done"
    print("\nA ranking run:\n" + report(walk.steps))
    assert count(walk.steps).returns <= 10, report(walk.steps)


def test_a_submission_walks_down_from_the_view(campaign, worker):
    assignment = take_hit(worker, campaign)
    page = worker.get(hit_url(assignment))
    walk = Walk()
    walk.trace(lambda: worker.submit(page, answers(assignment), action=hit_url(assignment)))
    assert assignment.judgments.count() == 3
    print("\nA judgment's submission:\n" + report(walk.steps))
