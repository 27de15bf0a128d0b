"""Organisers' pages cost the same whatever the campaign's size: the SQL queries of every
admin list and change page, and of the results page, for a campaign and one ten times
larger."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Annotator, Assignment, Hit, System
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.factories import make_bulk_judged_campaign

pytestmark = pytest.mark.django_db

LISTS = ["campaign", "item", "system", "output", "annotator", "hit", "assignment", "judgment"]
# The campaign's own admin pages beside the monitor.
OWN = ["upload", "bundle", "datasheet"]


def pages(campaign) -> list[str]:
    hit = Hit.objects.filter(campaign=campaign).first()
    changes = {
        "campaign": campaign.pk,
        "system": System.objects.filter(campaign=campaign).first().pk,
        "annotator": Annotator.objects.filter(campaign=campaign).first().pk,
        "hit": hit.pk,
        "assignment": Assignment.objects.filter(hit=hit).first().pk,
    }
    lists = [reverse(f"admin:annotation_{name}_changelist") for name in LISTS]
    change = [reverse(f"admin:annotation_{n}_change", args=[pk]) for n, pk in changes.items()]
    results = reverse("ranking:results", args=[campaign.slug, "quality"])
    monitor = reverse("admin:annotation_campaign_monitor", args=[campaign.pk])
    own = [reverse(f"admin:annotation_campaign_{page}", args=[campaign.pk]) for page in OWN]
    return [*lists, *change, results, monitor, f"{monitor}?part=progress", *own]


def costs(organiser, hits: int) -> dict[str, int]:
    campaign = make_bulk_judged_campaign(hits, systems=5)
    execute_run(
        RankingRun.objects.create(
            campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
        )
    )
    measured = {}
    for index, url in enumerate(pages(campaign)):
        organiser.get(url)  # Django caches content types and such on a first visit
        with CaptureQueriesContext(connection) as queries:
            response = organiser.get(url)
        assert response.status_code == 200, url
        measured[(index, url.split("/")[3] if url.startswith("/admin") else "results")] = len(
            queries
        )
    return measured


def test_admin_and_results_pages_cost_the_same_for_a_campaign_ten_times_larger(organiser):
    small = costs(organiser, hits=30)
    large = costs(organiser, hits=300)
    print(f"\nSQL queries per page: {large}")
    assert list(small.values()) == list(large.values())
    assert max(large.values()) <= 20
