import pytest
from django.urls import reverse

from ranking.automatic_metrics.models import MetricResult, MetricRun
from tests.factories import make_campaign, make_system

pytestmark = pytest.mark.django_db


def finished_run():
    campaign = make_campaign()
    run = MetricRun.objects.create(campaign=campaign, status="done", systems=1, outputs=3)
    MetricResult.objects.create(
        run=run, system=make_system(campaign, name="tgen"), metric="bleu", value=0.6593, outputs=3
    )
    return run


def test_metric_run_changelist_and_change_page_show_results(organiser):
    run = finished_run()
    changelist = reverse("admin:automatic_metrics_metricrun_changelist")
    listing = organiser.get(changelist).content.decode()
    assert run.campaign.name in listing and "results" in listing
    page = organiser.get(reverse("admin:automatic_metrics_metricrun_change", args=[run.pk]))
    assert "tgen" in page.content.decode() and "0.6593" in page.content.decode()


def test_metric_run_added_in_the_admin_is_sent_to_a_worker(
    organiser, django_capture_on_commit_callbacks
):
    campaign = make_campaign()
    with django_capture_on_commit_callbacks() as callbacks:
        response = organiser.send(
            "POST",
            reverse("admin:automatic_metrics_metricrun_add"),
            {"campaign": campaign.pk, "results-TOTAL_FORMS": 0, "results-INITIAL_FORMS": 0},
        )
    assert response.status_code == 302
    assert MetricRun.objects.get(campaign=campaign).status == "queued"
    assert len(callbacks) == 1


def test_queue_again_action_queues_one_run_per_campaign(organiser):
    run = finished_run()
    other = MetricRun.objects.create(campaign=run.campaign, status="failed")
    organiser.send(
        "POST",
        reverse("admin:automatic_metrics_metricrun_changelist"),
        {"action": "queue_again", "_selected_action": [run.pk, other.pk]},
    )
    assert MetricRun.objects.filter(campaign=run.campaign, status="queued").count() == 1
