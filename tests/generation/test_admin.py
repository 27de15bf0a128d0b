import pytest
from django.core.management import call_command
from django.urls import reverse

from generation.models import GenerationJob, HostedSystem

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
