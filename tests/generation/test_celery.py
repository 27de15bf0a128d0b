"""A hosted system through the real worker: generated outputs enter new HITs and the ranking."""

import pytest
from django.db import transaction

from annotation.handout.assignment import next_assignment
from annotation.handout.shown import Answer, shown_outputs
from generation.models import GenerationJob, HostedSystem
from generation.service import request_generation
from ranking.models import RankingRun
from tests.conftest import wait_until
from tests.factories import make_annotator, make_system, make_system_set
from tests.handout import submit

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def generated_campaign():
    campaign, _, items = make_system_set(systems=2, items=6)
    campaign.min_seconds_per_hit = 0
    campaign.save()
    system = make_system(campaign, name="e2e-template")
    hosted = HostedSystem.objects.create(system=system, backend="template-e2e")
    with transaction.atomic():
        job = request_generation(hosted)
    done = wait_until(
        lambda: GenerationJob.objects.filter(pk=job.pk, status="done").first(),
        timeout=60,
        message="the worker did not run the generation job",
    )
    assert (done.items_total, done.outputs_created) == (6, 6)
    return campaign, system


def judge_all_items(campaign, favourite: str) -> int:
    criterion = campaign.criteria.get(name="quality")
    with_favourite = 0
    for n in range(6):
        assignment = next_assignment(make_annotator(campaign), criterion)
        answers = {}
        for shown in shown_outputs(assignment.hit):
            names = {slot.output.system.name for slot in shown.slots}
            answers[shown.key] = Answer(score=300 if favourite in names else 100)
            with_favourite += favourite in names
        assert submit(assignment, criterion, answers, key=f"page-{n}").value == "saved"
    return with_favourite


def test_generated_outputs_enter_hits_and_the_ranking(celery_worker_process, settings):
    settings.RANKING_DEBOUNCE_SECONDS = 1
    campaign, system = generated_campaign()
    assert judge_all_items(campaign, favourite="e2e-template") == 6

    # Debounced: a run may start before the last HIT is in; a later one then follows.
    runs = RankingRun.objects.filter(campaign=campaign, protocol="e2e")
    run = wait_until(
        lambda: runs.filter(status="done", hits=6).first(),
        timeout=90,
        message="the ranking was not recomputed with all six HITs",
    )
    assert not runs.filter(status="failed").exists()
    best = run.results.order_by("position").first()
    assert best.system == system
    assert (run.hits, best.comparisons) == (6, 12)
