"""Run times and estimates as a person reads them (jobs/durations.py), and the admin's
columns of them: a ranking run of 85.2345 s reads "1 min 25 s", not 85.2345."""

import pytest
from django.urls import reverse

from jobs.durations import human_duration, rough_time_left
from ranking.automatic_metrics.models import MetricRun
from ranking.models import RankingRun
from tests.client import changelist_rows
from tests.factories import make_campaign


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (None, "–"),
        (0.04213, "0.04 s"),
        (9.996, "10.00 s"),
        (12.345, "12.3 s"),
        (60, "1 min"),
        (85.2345, "1 min 25 s"),
        (3599.4, "59 min 59 s"),
        (7530, "2 h 06 min"),
    ],
)
def test_human_duration(seconds, shown):
    assert human_duration(seconds) == shown


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(2, "about 5 s"), (42, "about 40 s"), (85, "about 1 min"), (1990, "about 33 min"),
     (4200, "about 1 h 10 min"), (7100, "about 2 h")],
)  # fmt: skip
def test_rough_time_left(seconds, shown):
    assert rough_time_left(seconds) == shown


@pytest.mark.django_db
def test_admin_lists_show_run_times_as_people_read_them(organiser):
    campaign = make_campaign()
    criterion = campaign.criteria.get(name="quality")
    RankingRun.objects.create(
        campaign=campaign, criterion=criterion, status="done", compute_seconds=85.2345
    )
    MetricRun.objects.create(campaign=campaign, status="done", compute_seconds=3.14159)
    [ranking] = changelist_rows(organiser.get(reverse("admin:ranking_rankingrun_changelist")))
    assert ranking["compute_time"] == "1 min 25 s"
    [metrics] = changelist_rows(
        organiser.get(reverse("admin:automatic_metrics_metricrun_changelist"))
    )
    assert metrics["compute_time"] == "3.14 s"
