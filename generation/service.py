"""Generation jobs: ask a hosted system's backend for the outputs its campaign lacks.

Outputs are written batch by batch as they come, so a worker killed half-way loses only the
batch in flight; a rerun generates only what is still missing, and the unique constraint on
(item, system) keeps two workers racing for one item from writing it twice.
"""

import logging
import time
from contextlib import suppress

from django.conf import settings
from django.db import transaction

from annotation.models import CampaignCriterion, Item, Output
from evalsite.jobs import ClaimLost, Heartbeat
from generation.backends import Backend, TypedInput, make_backend

from .models import GenerationJob, HostedSystem
from .secret_env import secret_env_policy

log = logging.getLogger(__name__)
MAX_ITEM_ERRORS = 50
_backends: dict[tuple, Backend] = {}


def missing_items(hosted: HostedSystem):
    campaign_items = Item.objects.filter(campaign_id=hosted.system.campaign_id)
    return campaign_items.exclude(outputs__system_id=hosted.system_id).order_by("id")


def backend_for(hosted: HostedSystem) -> Backend:
    """One backend per worker process and configuration: a model is loaded once and kept."""
    secret_env = secret_env_policy()  # the worker checks too: rows may predate the rule
    key = (hosted.pk, hosted.backend, repr(sorted(hosted.settings.items())), secret_env)
    if key not in _backends:
        _backends[key] = make_backend(hosted.backend, hosted.settings, secret_env)
    return _backends[key]


def request_generation(hosted: HostedSystem) -> GenerationJob:
    """Queue a job for the generation workers once this transaction commits."""
    job = GenerationJob.objects.create(hosted=hosted, items_total=missing_items(hosted).count())
    job.send_to_worker()
    return job


def run_job(job: GenerationJob, on_batch=None) -> bool:
    """Generate every missing output of the job's system; False if another worker has it
    or took it over. `on_batch(job)` is called after each saved batch (the command prints
    progress with it)."""
    token = job.claim(items_done=0, outputs_created=0, items_failed=0, item_errors=[])
    if token is None:
        return False
    job.items_done = job.outputs_created = job.items_failed = 0
    job.item_errors = []
    started = time.perf_counter()
    try:
        with Heartbeat(job, token) as heartbeat:
            generate_missing(job, token, heartbeat, on_batch)
    except ClaimLost:
        log.warning("generation job %s was taken over by another worker", job.pk)
        return False
    except Exception as error:
        log.exception("generation job %s failed", job.pk)
        with suppress(ClaimLost):
            finish(job, token, GenerationJob.Status.FAILED, started, error=str(error)[:2000])
        raise
    finish(job, token, GenerationJob.Status.DONE, started)
    return True


def generate_missing(job: GenerationJob, token: str, heartbeat: Heartbeat, on_batch=None) -> None:
    hosted = job.hosted
    todo = list(missing_items(hosted).values_list("id", "input_kind", "input_data"))
    job.update_as_holder(token, items_total=len(todo))
    job.items_total = len(todo)
    backend = backend_for(hosted)
    size = max(hosted.batch_size, 1)
    for start in range(0, len(todo), size):
        batch = todo[start : start + size]
        results = backend.generate([TypedInput(kind, data) for _, kind, data in batch])
        heartbeat.check()
        save_batch(job, token, batch, results)
        if on_batch:
            on_batch(job)


def save_batch(job: GenerationJob, token: str, batch: list, results: list) -> None:
    limit = settings.MAX_OUTPUT_CHARS
    outputs, errors = [], []
    for (item_id, _, _), result in zip(batch, results, strict=True):
        text = (result.text or "").strip()
        if result.ok and text:
            outputs.append(
                Output(
                    item_id=item_id,
                    system_id=job.hosted.system_id,
                    text=text[:limit],
                    origin=Output.Origin.GENERATED,
                )
            )
        else:
            errors.append([item_id, result.error or "empty output"])
    batch_outputs = Output.objects.filter(
        system_id=job.hosted.system_id, item_id__in=[item_id for item_id, _, _ in batch]
    )
    with transaction.atomic():
        before = batch_outputs.count()
        Output.objects.bulk_create(outputs, ignore_conflicts=True)
        job.items_done += len(batch)
        job.outputs_created += batch_outputs.count() - before
        job.items_failed += len(errors)
        job.item_errors = (job.item_errors + errors)[:MAX_ITEM_ERRORS]
        CampaignCriterion.objects.filter(
            campaign_id=job.hosted.system.campaign_id
        ).record_pool_change()
        # Outputs and progress commit only while this worker holds the job.
        job.update_as_holder(
            token,
            items_done=job.items_done,
            outputs_created=job.outputs_created,
            items_failed=job.items_failed,
            item_errors=job.item_errors,
        )


def finish(job: GenerationJob, token: str, status: str, started: float, error: str = "") -> None:
    job.finish_as_holder(token, status, seconds=time.perf_counter() - started, error=error)
