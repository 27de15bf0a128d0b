import pytest
from django.urls import reverse

from ranking.agreement.models import AnnotatorAgreement, RunAgreement
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.client import changelist_rows
from tests.factories import make_annotator, make_campaign, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db

RUN_LIST = reverse("admin:ranking_rankingrun_changelist")
RUN_ADD = reverse("admin:ranking_rankingrun_add")


def ranked_campaign():
    campaign, _, items = make_system_set(systems=3, items=4)
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [300, 100, 50])
    run = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
    )
    execute_run(run)
    return campaign, run


def test_admin_run_list_shows_each_run_with_its_progress_and_results_link(organiser):
    campaign, done = ranked_campaign()
    queued = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="naturalness"), protocol="bootstrap"
    )
    response = organiser.get(RUN_LIST)
    page = response.content.decode()
    assert '<progress max="10" value="10"></progress> 10/10' in page
    assert '<progress max="200" value="0"></progress> 0/200' in page
    for run in (done, queued):
        url = reverse("ranking:results", args=[campaign.slug, run.criterion.name])
        assert f'<a href="{url}?protocol={run.protocol}">results</a>' in page
    shown = [
        (
            row["id"],
            row["criterion_label"],
            row["protocol_label"],
            row["state"],
            row["progress_bar"],
        )
        for row in changelist_rows(response)
    ]
    assert shown == [
        (str(queued.pk), "Naturalness", queued.protocol_label, "Queued", "0/200"),
        (str(done.pk), "Quality", done.protocol_label, "Done", "10/10"),
    ]


def test_admin_run_page_shows_its_results(organiser):
    _, run = ranked_campaign()
    page = organiser.get(reverse("admin:ranking_rankingrun_change", args=[run.pk]))
    assert page.status_code == 200
    assert all(f">{name}<" in page.content.decode() for name in ("sys1", "sys2", "sys3"))


def test_admin_queue_again_queues_the_same_computation(
    organiser, django_capture_on_commit_callbacks
):
    campaign, run = ranked_campaign()
    RankingRun.objects.filter(pk=run.pk).update(seed=7, protocol="bootstrap")
    with django_capture_on_commit_callbacks() as callbacks:
        response = organiser.submit(
            organiser.get(RUN_LIST),
            {"action": "queue_again", "_selected_action": [run.pk]},
            action=RUN_LIST,
            follow=True,
        )
    assert "1 run(s) queued." in response.content.decode()
    again = RankingRun.objects.exclude(pk=run.pk).get()
    assert (again.campaign, again.criterion.name, again.protocol) == (
        campaign,
        "quality",
        "bootstrap",
    )
    assert (again.repetitions, again.seed, again.status) == (10, 7, "queued")
    assert len(callbacks) == 1


def new_run(campaign, repetitions) -> dict:
    """What the organiser fills in on the admin's page for a new run."""
    criterion = campaign.criteria.get(name="quality")
    fields = {"criterion": criterion.pk, "protocol": "e2e", "seed": 0}
    return {"repetitions": repetitions, **fields}


def add_run(person, campaign, repetitions):
    return person.submit(person.get(RUN_ADD), new_run(campaign, repetitions), action=RUN_ADD)


def test_admin_queue_again_without_csrf_token_is_refused(organiser):
    _, run = ranked_campaign()
    response = organiser.post(RUN_LIST, {"action": "queue_again", "_selected_action": [run.pk]})
    assert response.status_code == 403
    assert RankingRun.objects.get() == run


def test_admin_queue_again_outsider_queues_nothing(non_staff):
    _, run = ranked_campaign()
    data = {"action": "queue_again", "_selected_action": [run.pk]}
    response = non_staff.send("POST", RUN_LIST, data)
    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))
    assert RankingRun.objects.get() == run


@pytest.mark.parametrize("repetitions", [0, 9, 10_001, 10**9])
def test_admin_refuses_repetitions_out_of_range(organiser, repetitions):
    campaign = make_campaign()
    response = add_run(organiser, campaign, repetitions)
    assert response.status_code == 200  # the form again, with the error
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["repetitions"] and "Ensure this value is" in errors["repetitions"][0]
    assert not RankingRun.objects.exists()


def test_admin_added_run_is_queued_and_sent(organiser, django_capture_on_commit_callbacks):
    campaign = make_campaign()
    with django_capture_on_commit_callbacks() as callbacks:
        response = add_run(organiser, campaign, 10_000)
    assert response.status_code == 302
    run = RankingRun.objects.get()
    assert (run.campaign, run.repetitions, run.status) == (campaign, 10_000, "queued")
    assert len(callbacks) == 1


def test_admin_add_run_without_csrf_token_is_refused(organiser):
    campaign = make_campaign()
    data = {**new_run(campaign, 200), "results-TOTAL_FORMS": 0, "results-INITIAL_FORMS": 0}
    assert organiser.post(RUN_ADD, data).status_code == 403
    assert not RankingRun.objects.exists()


# Agreement between annotators -----------------------------------------------------------------


def disagreeing_campaign():
    """Annotators A, B and D rank sys1 > sys2 > sys3 on three items; C reverses them."""
    campaign, _, items = make_system_set(systems=3, items=3)
    people = {name: make_annotator(campaign, external_id=name) for name in "ABCD"}
    for item in items:
        outputs = list(item.outputs.order_by("system__name"))
        for name, annotator in people.items():
            make_judged_hit(outputs, [10, 20, 30] if name == "C" else [30, 20, 10], annotator)
    run = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
    )
    execute_run(run)
    return run, people


def agreement_list(run) -> str:
    url = reverse("admin:agreement_annotatoragreement_changelist")
    return f"{url}?run__id__exact={run.pk}"


def test_admin_run_page_shows_alpha_and_links_to_its_annotators(organiser):
    run, _ = disagreeing_campaign()
    page = organiser.get(reverse("admin:ranking_rankingrun_change", args=[run.pk])).content
    alpha = RunAgreement.objects.get(run=run).alpha
    assert f"{alpha:g}"[:6] in page.decode()
    assert f'<a href="{agreement_list(run)}">annotators</a>' in page.decode().replace("&amp;", "&")


def test_admin_annotator_agreement_lists_the_runs_annotators(organiser):
    run, people = disagreeing_campaign()
    other, _ = disagreeing_campaign()
    rows = changelist_rows(organiser.get(agreement_list(run)))  # lowest agreement first
    shown = [(row["annotator"], row["correlation_shown"], row["hits"]) for row in rows]
    assert shown == [
        ("prolific:C", "-1.000", "3"),
        ("prolific:A", "1.000", "3"),
        ("prolific:B", "1.000", "3"),
        ("prolific:D", "1.000", "3"),
    ]
    assert AnnotatorAgreement.objects.filter(run=other).count() == 4


def test_admin_annotator_agreement_is_read_only(organiser):
    run, _ = disagreeing_campaign()
    row = AnnotatorAgreement.objects.filter(run=run).first()
    page = organiser.get(reverse("admin:agreement_annotatoragreement_change", args=[row.pk]))
    assert page.status_code == 200 and "Save" not in page.content.decode()
    response = organiser.send(
        "POST", reverse("admin:agreement_annotatoragreement_delete", args=[row.pk]), {"post": "yes"}
    )
    assert response.status_code == 403
    assert AnnotatorAgreement.objects.filter(pk=row.pk).exists()


@pytest.mark.parametrize("outsider", ["stranger", "non_staff"])
def test_admin_annotator_agreement_sends_outsiders_to_the_login_page(request, outsider):
    run, _ = disagreeing_campaign()
    response = request.getfixturevalue(outsider).get(agreement_list(run))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_admin_run_list_shows_a_run_with_nothing_to_rank_as_such(organiser):
    campaign, _, _ = make_system_set(systems=3, items=2)  # no judgments
    run = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), protocol="wmt"
    )
    execute_run(run)
    [row] = changelist_rows(organiser.get(RUN_LIST))
    assert (row["id"], row["state"]) == (str(run.pk), "Nothing to rank")
    page = organiser.get(reverse("admin:ranking_rankingrun_change", args=[run.pk]))
    assert "Nothing to rank: no comparisons yet" in page.content.decode()
    assert RankingRun.objects.get().status == "done"
