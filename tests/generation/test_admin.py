import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from generation.models import GenerationJob, HostedSystem
from generation.service import run_job
from tests.client import changelist_rows
from tests.factories import make_item, make_output, make_system, make_system_set

pytestmark = pytest.mark.django_db

HOSTED_LIST = reverse("admin:generation_hostedsystem_changelist")
GENERATE = {"action": "generate_outputs"}


def make_hosted(items: int = 4, with_output: int = 1) -> HostedSystem:
    """The E2E templates as a system of a campaign of `items` items, `with_output` of which
    it already has an output for."""
    campaign, _, item_rows = make_system_set(systems=2, items=items)
    system = make_system(campaign, name="e2e-template")
    for item in item_rows[:with_output]:
        make_output(item, system)
    return HostedSystem.objects.create(system=system, backend="template-e2e", batch_size=8)


def test_admin_generate_action_queues_a_job(organiser, django_capture_on_commit_callbacks):
    hosted = make_hosted(items=4, with_output=1)
    page = organiser.get(HOSTED_LIST)
    chosen = {**GENERATE, "_selected_action": [hosted.pk]}
    with django_capture_on_commit_callbacks() as callbacks:
        response = organiser.submit(page, chosen, action=HOSTED_LIST, follow=True)
    assert "1 job(s) queued for 3 items" in response.content.decode()
    job = GenerationJob.objects.get()
    assert (job.hosted, job.status, job.items_total) == (hosted, "queued", 3)
    assert len(callbacks) == 1


def test_admin_generate_action_twice_joins_the_job_waiting(
    organiser, django_capture_on_commit_callbacks
):
    hosted = make_hosted(items=4, with_output=1)
    chosen = {**GENERATE, "_selected_action": [hosted.pk]}
    with django_capture_on_commit_callbacks() as callbacks:
        for _ in range(2):
            organiser.submit(organiser.get(HOSTED_LIST), chosen, action=HOSTED_LIST)
    job = GenerationJob.objects.get()  # one job per system at a time
    assert (job.hosted, job.status) == (hosted, "queued")
    assert len(callbacks) == 1


def test_admin_generate_action_without_csrf_token_is_refused(organiser):
    hosted = make_hosted()
    response = organiser.post(HOSTED_LIST, {**GENERATE, "_selected_action": [hosted.pk]})
    assert response.status_code == 403
    assert not GenerationJob.objects.exists()


def test_admin_generate_action_outsider_queues_nothing(non_staff):
    hosted = make_hosted()
    response = non_staff.send("POST", HOSTED_LIST, {**GENERATE, "_selected_action": [hosted.pk]})
    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))
    assert not GenerationJob.objects.exists()


def test_admin_hosted_system_list_shows_outputs_and_missing_items(organiser):
    hosted = make_hosted(items=4, with_output=1)
    rows = changelist_rows(organiser.get(HOSTED_LIST))
    assert rows == [
        {
            "system": "e2e-template",
            "campaign": hosted.system.campaign.name,
            "backend": "E2E templates",
            "batch_size": "8",
            "outputs": "1",
            "missing": "3",
        }
    ]


def test_admin_generation_job_list_shows_a_finished_job(organiser):
    hosted = make_hosted(items=4, with_output=1)
    job = GenerationJob.objects.create(hosted=hosted, items_total=3)
    assert run_job(job)
    rows = changelist_rows(organiser.get(reverse("admin:generation_generationjob_changelist")))
    shown = [
        (row["id"], row["hosted"], row["status"], row["progress_bar"], row["outputs_created"])
        for row in rows
    ]
    assert shown == [(str(job.pk), str(hosted), "Done", "3/3", "3")]


def test_admin_refuses_a_key_variable_outside_the_rule_on_the_settings_field(organiser):
    system = make_system()
    settings = {"base_url": "https://llm.example.org/v1", "model": "m", "api_key_env": "SECRET_KEY"}
    add = reverse("admin:generation_hostedsystem_add")
    response = organiser.submit(
        organiser.get(add),
        {
            "system": system.pk,
            "backend": "openai",
            "settings": json.dumps(settings),
            "batch_size": 16,
        },
        action=add,
    )
    assert response.status_code == 200  # the form again, with the error
    errors = response.context["adminform"].form.errors
    assert "names SECRET_KEY, which this deployment does not allow" in errors["settings"][0]
    assert not HostedSystem.objects.exists()


def test_admin_refuses_an_endpoint_on_the_metadata_address(organiser):
    system = make_system()
    settings = {"base_url": "http://169.254.169.254/latest/meta-data", "model": "m"}
    add = reverse("admin:generation_hostedsystem_add")
    data = {"system": system.pk, "backend": "openai", "settings": json.dumps(settings)}
    response = organiser.submit(organiser.get(add), {**data, "batch_size": 16}, action=add)
    assert response.status_code == 200  # the form again, with the error
    errors = response.context["adminform"].form.errors
    assert "169.254.169.254 resolves to 169.254.169.254, not a public" in errors["settings"][0]
    assert not HostedSystem.objects.exists()


def test_admin_adds_a_hosted_system(organiser):
    system = make_system()
    add = reverse("admin:generation_hostedsystem_add")
    data = {"system": system.pk, "backend": "template-e2e", "settings": "{}", "batch_size": 4}
    response = organiser.submit(organiser.get(add), data, action=add)
    assert response.status_code == 302
    hosted = HostedSystem.objects.get()
    assert (hosted.system, hosted.backend, hosted.settings, hosted.batch_size) == (
        system,
        "template-e2e",
        {},
        4,
    )


def test_admin_add_without_csrf_token_is_refused(organiser):
    system = make_system()
    data = {"system": system.pk, "backend": "template-e2e", "settings": "{}", "batch_size": 4}
    add = reverse("admin:generation_hostedsystem_add")
    assert organiser.post(add, data).status_code == 403
    assert not HostedSystem.objects.exists()


def test_admin_hosted_systems_count_outputs_and_missing_items_per_page_not_per_row(organiser):
    hosted = make_hosted(items=12, with_output=10)
    with CaptureQueriesContext(connection) as one_row:
        organiser.get(HOSTED_LIST)
    other = HostedSystem.objects.create(system=make_system(), backend="template-e2e")
    make_item(other.system.campaign)
    with CaptureQueriesContext(connection) as two_rows:
        rows = changelist_rows(organiser.get(HOSTED_LIST))
    assert len(two_rows) == len(one_row)
    counts = {row["system"]: (row["outputs"], row["missing"]) for row in rows}
    assert counts == {str(hosted.system): ("10", "2"), str(other.system): ("0", "1")}
