import pytest
from django.core.exceptions import ValidationError

from annotation.models import Output
from generation.models import HostedSystem
from generation.service import backend_for, new_job, run_job
from tests.factories import make_campaign, make_item, make_system
from tests.generation.backends.test_openai_backend import INTERNAL_PAGE, server

pytestmark = pytest.mark.django_db


def hosted_template(items: int = 5, batch_size: int = 2) -> HostedSystem:
    campaign = make_campaign()
    for n in range(items):
        make_item(campaign, input_data={"attributes": [["name", f"Place {n}"], ["food", "Thai"]]})
    system = make_system(campaign, name="e2e-template")
    return HostedSystem.objects.create(system=system, backend="template-e2e", batch_size=batch_size)


def test_run_job_creates_one_output_per_missing_item():
    hosted = hosted_template(items=5)
    job = new_job(hosted)
    assert run_job(job)
    job.refresh_from_db()
    assert (job.status, job.items_done, job.outputs_created, job.items_failed) == ("done", 5, 5, 0)
    assert job.seconds is not None and job.error == ""
    outputs = Output.objects.filter(system=hosted.system)
    assert outputs.count() == 5
    assert all(o.origin == "generated" and "Thai" in o.text for o in outputs)


def test_run_job_twice_creates_nothing_the_second_time():
    hosted = hosted_template(items=3)
    run_job(new_job(hosted))
    again = new_job(hosted)
    run_job(again)
    again.refresh_from_db()
    assert (again.items_total, again.outputs_created) == (0, 0)
    assert Output.objects.filter(system=hosted.system).count() == 3


def test_run_job_records_errors_per_item_and_goes_on():
    hosted = hosted_template(items=2)
    make_item(
        hosted.system.campaign,
        input_kind="triples",
        input_data={"triples": [["A", "b", "C"]]},
        input_key="triples:A b C",
    )
    job = new_job(hosted)
    run_job(job)
    job.refresh_from_db()
    assert (job.status, job.outputs_created, job.items_failed) == ("done", 2, 1)
    assert "triples" in job.item_errors[0][1]


def test_run_job_killed_after_a_batch_keeps_it_and_rerun_fills_the_rest():
    hosted = hosted_template(items=5, batch_size=2)
    job = new_job(hosted)

    def die_after_first_batch(job):
        raise KeyboardInterrupt("worker killed")

    with pytest.raises(KeyboardInterrupt):
        run_job(job, on_batch=die_after_first_batch)
    assert Output.objects.filter(system=hosted.system).count() == 2
    rerun = new_job(hosted)
    run_job(rerun)
    rerun.refresh_from_db()
    assert (rerun.items_total, rerun.outputs_created) == (3, 3)
    assert Output.objects.filter(system=hosted.system).count() == 5


def test_run_job_is_claimed_once():
    hosted = hosted_template(items=1)
    job = new_job(hosted)
    assert run_job(job)
    assert not run_job(job)


def test_backend_for_builds_once_per_configuration():
    hosted = hosted_template(items=1)
    assert backend_for(hosted) is backend_for(hosted)


def test_hosted_system_rejects_bad_settings():
    hosted = hosted_template(items=1)
    hosted.backend, hosted.settings = "openai", {"base_url": "http://127.0.0.1:1", "temprature": 1}
    with pytest.raises(ValidationError) as error:
        hosted.full_clean()
    assert "settings" in error.value.message_dict


def test_worker_refuses_a_key_variable_saved_before_the_rule(monkeypatch):
    # A row that never went through clean(): the worker must not read the variable.
    monkeypatch.setenv("DATABASE_URL", "postgres://user:db-password@db/evaluation")
    hosted = hosted_template(items=1)
    hosted.backend = "openai"
    hosted.settings = {"base_url": "http://127.0.0.1:1/v1", "model": "m"}
    hosted.settings["api_key_env"] = "DATABASE_URL"
    hosted.save()
    job = new_job(hosted)
    with pytest.raises(ValueError, match="names DATABASE_URL, which this deployment does not"):
        run_job(job)
    job.refresh_from_db()
    assert job.status == "failed" and "HOSTED_SECRET_ENV_PREFIX" in job.error
    assert job.seconds is not None and job.finished_at is not None
    assert not Output.objects.filter(system=hosted.system).exists()


# The backend tests' OpenAI-compatible fake, on 127.0.0.1.
endpoint = server


def hosted_on(server, items: int = 2, prompt: str = "{input}") -> HostedSystem:
    """A system served by the fake endpoint on 127.0.0.1, saved without clean() (as a row
    from before the rule would be)."""
    hosted = hosted_template(items=items)
    hosted.backend = "openai"
    hosted.settings = {"base_url": server.base_url, "model": "m", "prompt_template": prompt}
    hosted.settings |= {"max_retries": 0}
    hosted.save()
    return hosted


def test_worker_refuses_an_internal_endpoint_without_the_setting(endpoint):
    hosted = hosted_on(endpoint)
    job = new_job(hosted)
    with pytest.raises(ValueError, match="127.0.0.1 resolves to 127.0.0.1, not a public"):
        run_job(job)
    job.refresh_from_db()
    assert job.status == "failed" and "HOSTED_ENDPOINT_ALLOWED_HOSTS" in job.error
    assert not Output.objects.filter(system=hosted.system).exists()
    assert endpoint.requests == []


def test_worker_reaches_an_internal_endpoint_the_deployment_allows(endpoint, settings):
    settings.HOSTED_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
    hosted = hosted_on(endpoint)
    assert run_job(new_job(hosted))
    assert Output.objects.filter(system=hosted.system).count() == 2
    assert len(endpoint.requests) == 2


def test_worker_stores_no_raw_error_body(endpoint, settings):
    settings.HOSTED_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
    hosted = hosted_on(endpoint, items=1, prompt="500-page {input}")
    job = new_job(hosted)
    run_job(job)
    job.refresh_from_db()
    [[_, error]] = job.item_errors
    size = len(INTERNAL_PAGE)
    assert error.endswith(f"HTTP 500: no error message ({size} bytes of body, not shown)")
    assert "hunter2" not in str(job.item_errors)
