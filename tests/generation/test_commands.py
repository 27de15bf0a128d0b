import pytest
from django.core.management import CommandError, call_command

from annotation.handout.assignment import next_assignment
from annotation.models import Campaign, Output
from generation.models import GenerationJob
from tests.factories import make_annotator

pytestmark = pytest.mark.django_db


def test_generate_demo_template_fills_missing_outputs_once(capsys):
    call_command("demo")
    call_command("generate", "demo", "e2e-template")
    assert "36 outputs created for 36 items lacking one" in capsys.readouterr().out
    outputs = Output.objects.filter(system__name="e2e-template", item__campaign__slug="demo")
    assert outputs.count() == 36
    assert set(outputs.values_list("origin", flat=True)) == {"generated"}
    call_command("generate", "demo", "e2e-template")
    assert "0 outputs created for 0 items lacking one" in capsys.readouterr().out
    assert outputs.count() == 36


def test_generate_queue_creates_a_queued_job(django_capture_on_commit_callbacks):
    call_command("demo")
    with django_capture_on_commit_callbacks() as callbacks:
        call_command("generate", "demo", "e2e-template", "--queue")
    job = GenerationJob.objects.get()
    assert (job.status, job.items_total) == ("queued", 36)
    assert len(callbacks) == 1


def test_generate_unknown_system_is_an_error():
    call_command("demo")
    with pytest.raises(CommandError, match="no hosted system 'fluent' in campaign 'demo'"):
        call_command("generate", "demo", "fluent")
    assert not GenerationJob.objects.exists()


def test_demo_gives_work_before_and_after_its_hosted_system_generates():
    call_command("demo")
    quality = Campaign.objects.get(slug="demo").criteria.get(name="quality")
    before = next_assignment(make_annotator(quality.campaign), quality)
    # The demo checks attention: a first HIT also shows a degraded copy of one output.
    assert before is not None and before.hit.slots.originals().count() == 4
    call_command("generate", "demo", "e2e-template")
    after = next_assignment(make_annotator(quality.campaign), quality)
    systems = set(after.hit.slots.values_list("output__system__name", flat=True))
    assert len(systems) == 5 and "e2e-template" in systems
