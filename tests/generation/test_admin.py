import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from generation.models import GenerationJob, HostedSystem
from tests.factories import make_system

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
