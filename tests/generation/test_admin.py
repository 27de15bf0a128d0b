import json
import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import strip_tags

from generation.models import GenerationJob, HostedSystem
from tests.factories import make_item, make_output, make_system

pytestmark = pytest.mark.django_db


def test_admin_generate_action_queues_a_job(admin_client, django_capture_on_commit_callbacks):
    call_command("demo")
    hosted = HostedSystem.objects.get()
    url = reverse("admin:generation_hostedsystem_changelist")
    with django_capture_on_commit_callbacks() as callbacks:
        response = admin_client.post(
            url, {"action": "generate_outputs", "_selected_action": [hosted.pk]}, follow=True
        )
    assert "1 job(s) queued for 36 items" in response.content.decode()
    assert GenerationJob.objects.get().status == "queued"
    assert len(callbacks) == 1


@pytest.mark.parametrize("model", ["hostedsystem", "generationjob"])
def test_admin_generation_pages_render(admin_client, model):
    call_command("demo")
    call_command("generate", "demo", "e2e-template")
    response = admin_client.get(reverse(f"admin:generation_{model}_changelist"))
    assert response.status_code == 200
    assert "e2e-template" in response.content.decode() or "E2E templates" in (
        response.content.decode()
    )


def test_admin_refuses_a_key_variable_outside_the_rule_on_the_settings_field(admin_client):
    system = make_system()
    settings = {"base_url": "https://llm.example.org/v1", "model": "m", "api_key_env": "SECRET_KEY"}
    response = admin_client.post(
        reverse("admin:generation_hostedsystem_add"),
        {
            "system": system.pk,
            "backend": "openai",
            "settings": json.dumps(settings),
            "batch_size": 16,
        },
    )
    assert response.status_code == 200  # the form again, with the error
    errors = response.context["adminform"].form.errors
    assert "names SECRET_KEY, which this deployment does not allow" in errors["settings"][0]
    assert not HostedSystem.objects.exists()


def hosted_changelist_rows(admin_client) -> tuple[list[list[str]], int]:
    """The changelist's rows as cell texts, and how many queries the page took."""
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(reverse("admin:generation_hostedsystem_changelist"))
    body = response.content.decode().split("<tbody>")[1]
    rows = [
        [strip_tags(cell).strip() for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)]
        for row in re.findall(r"<tr>.*?</tr>", body, re.S)
    ]
    return rows, len(queries)


def test_admin_hosted_systems_count_outputs_and_missing_items_per_page_not_per_row(
    admin_client,
):
    call_command("demo")
    hosted = HostedSystem.objects.get()
    for item in hosted.system.campaign.items.order_by("id")[:10]:
        make_output(item, hosted.system)
    _, queries_for_one_row = hosted_changelist_rows(admin_client)
    other = HostedSystem.objects.create(system=make_system(), backend="template-e2e")
    make_item(other.system.campaign)
    rows, queries_for_two_rows = hosted_changelist_rows(admin_client)
    assert queries_for_two_rows == queries_for_one_row
    counts = {row[1]: row[-2:] for row in rows}
    assert counts[str(hosted.system)] == ["10", "26"]
    assert counts[str(other.system)] == ["0", "1"]
