import pytest
from django.urls import reverse

from ranking.models import RankingRun
from ranking.service import execute_run
from tests.factories import make_campaign, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db


def ranked_campaign():
    campaign, _, items = make_system_set(systems=3, items=4)
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [300, 100, 50])
    run = RankingRun.objects.create(campaign=campaign, criterion="quality", repetitions=10)
    execute_run(run)
    return campaign, run


def test_admin_run_list_shows_each_run_with_its_progress_and_results_link(admin_client):
    campaign, done = ranked_campaign()
    queued = RankingRun.objects.create(
        campaign=campaign, criterion="naturalness", protocol="bootstrap"
    )
    page = admin_client.get(reverse("admin:ranking_rankingrun_changelist")).content.decode()
    assert '<progress max="10" value="10"></progress> 10/10' in page
    assert '<progress max="200" value="0"></progress> 0/200' in page
    for run in (done, queued):
        url = reverse("ranking:results", args=[campaign.slug, run.criterion])
        assert f'<a href="{url}?protocol={run.protocol}">results</a>' in page


def test_admin_run_page_shows_its_results(admin_client):
    _, run = ranked_campaign()
    page = admin_client.get(reverse("admin:ranking_rankingrun_change", args=[run.pk]))
    assert page.status_code == 200
    assert all(f">{name}<" in page.content.decode() for name in ("sys1", "sys2", "sys3"))


def test_admin_queue_again_queues_the_same_computation(
    admin_client, django_capture_on_commit_callbacks
):
    campaign, run = ranked_campaign()
    RankingRun.objects.filter(pk=run.pk).update(seed=7, protocol="bootstrap")
    with django_capture_on_commit_callbacks() as callbacks:
        response = admin_client.post(
            reverse("admin:ranking_rankingrun_changelist"),
            {"action": "queue_again", "_selected_action": [run.pk]},
            follow=True,
        )
    assert "1 run(s) queued." in response.content.decode()
    again = RankingRun.objects.exclude(pk=run.pk).get()
    assert (again.campaign, again.criterion, again.protocol) == (campaign, "quality", "bootstrap")
    assert (again.repetitions, again.seed, again.status) == (10, 7, "queued")
    assert len(callbacks) == 1


def add_run(admin_client, campaign, repetitions):
    return admin_client.post(
        reverse("admin:ranking_rankingrun_add"),
        {
            "campaign": campaign.pk,
            "criterion": "quality",
            "protocol": "e2e",
            "repetitions": repetitions,
            "seed": 0,
            "results-TOTAL_FORMS": 0,
            "results-INITIAL_FORMS": 0,
        },
    )


@pytest.mark.parametrize("repetitions", [0, 9, 10_001, 10**9])
def test_admin_refuses_repetitions_out_of_range(admin_client, repetitions):
    campaign = make_campaign()
    response = add_run(admin_client, campaign, repetitions)
    assert response.status_code == 200  # the form again, with the error
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["repetitions"] and "Ensure this value is" in errors["repetitions"][0]
    assert not RankingRun.objects.exists()


def test_admin_added_run_is_queued_and_sent(admin_client, django_capture_on_commit_callbacks):
    campaign = make_campaign()
    with django_capture_on_commit_callbacks() as callbacks:
        response = add_run(admin_client, campaign, 10_000)
    assert response.status_code == 302
    run = RankingRun.objects.get()
    assert (run.campaign, run.repetitions, run.status) == (campaign, 10_000, "queued")
    assert len(callbacks) == 1
