"""A pairwise-preference criterion ranked by a real worker process, found by its sweep with
no message, as RankME's are (tests/ranking/test_celery.py): every view that fits the form."""

import pytest

from annotation.judging import form_named
from ranking.models import RankingRun
from tests.annotation.test_ratings_pairwise import imported, ratings_csv
from tests.conftest import wait_until
from tests.judging_helpers import form_world

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def worker_done_before_the_flush(celery_worker_process):
    yield
    wait_until(
        lambda: not RankingRun.objects.pending().exists(),
        timeout=120,
        message="the worker did not finish its queued runs",
    )


def test_imported_pairwise_judgments_are_ranked_by_the_worker_with_every_fitting_view():
    campaign = form_world()
    imported(campaign, ratings_csv())
    criterion = campaign.criteria.get(name="coherence")
    runs = RankingRun.objects.filter(campaign=campaign, criterion=criterion)
    for protocol in form_named("pairwise").protocols:
        run = wait_until(
            lambda protocol=protocol: runs.filter(protocol=protocol, status="done").first(),
            timeout=90,
            message=f"the sweep did not rank the pairwise judgments ({protocol})",
        )
        names = list(run.results.order_by("position").values_list("system__name", flat=True))
        assert names[0] == "alpha" and names[-1] == "delta", protocol
        assert run.hits == 108 and run.judgments == 216
    assert not runs.filter(status="failed").exists()
    bws = runs.get(protocol="bws").results.get(system__name="alpha")
    assert (bws.wins, bws.losses, bws.mu) == (54, 0, 100.0)
