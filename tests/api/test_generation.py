from generation.models import GenerationJob, HostedSystem
from generation.service import run_job
from tests.factories import make_system


def test_start_a_generation_job_and_poll_it(changer, campaign):
    system = campaign.systems.create(name="template")
    HostedSystem.objects.create(system=system, backend="template-e2e", batch_size=8)
    url = f"/campaigns/{campaign.slug}/systems/template/generation/"
    response = changer.call("POST", url)
    assert response.status_code == 202, response.content
    job = GenerationJob.objects.get()
    assert response.json()["id"] == job.pk and response.json()["status"] == "queued"
    assert changer.call("POST", url).json()["id"] == job.pk  # one job at a time
    run_job(job)  # what the generation worker does
    progress = changer.call("GET", f"/campaigns/{campaign.slug}/generation/{job.pk}/").json()
    assert progress["status"] == "done"
    assert progress["outputs_created"] == campaign.items.count() == system.outputs.count()


def test_a_system_that_is_not_hosted_cannot_generate(changer, campaign):
    response = changer.call("POST", f"/campaigns/{campaign.slug}/systems/sys1/generation/")
    assert response.status_code == 404
    assert not GenerationJob.objects.exists()


def test_view_token_cannot_start_generation(looker, campaign):
    HostedSystem.objects.create(system=campaign.systems.get(name="sys1"), backend="template-e2e")
    response = looker.call("POST", f"/campaigns/{campaign.slug}/systems/sys1/generation/")
    assert response.status_code == 403
    assert not GenerationJob.objects.exists()


def test_job_of_another_campaign_is_404(changer, campaign):
    hosted = HostedSystem.objects.create(system=make_system(), backend="template-e2e")
    job = GenerationJob.objects.create(hosted=hosted)
    response = changer.call("GET", f"/campaigns/{campaign.slug}/generation/{job.pk}/")
    assert response.status_code == 404
