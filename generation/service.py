"""Generation jobs: ask a hosted system's backend for the outputs its campaign lacks.

Outputs are written batch by batch as they come, so a worker killed half-way loses only the
batch in flight; a rerun generates only what is still missing, and the unique constraint on
(item, system) keeps two workers racing for one item from writing it twice.
"""

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Item, Output
from generation.backends import Backend, TypedInput, make_backend

from .models import GenerationJob, HostedSystem

log = logging.getLogger(__name__)
MAX_ITEM_ERRORS = 50
_backends: dict[tuple, Backend] = {}


def missing_items(hosted: HostedSystem):
    campaign_items = Item.objects.filter(campaign_id=hosted.system.campaign_id)
    return campaign_items.exclude(outputs__system_id=hosted.system_id).order_by("id")


def backend_for(hosted: HostedSystem) -> Backend:
    """One backend per worker process and configuration: a model is loaded once and kept."""
    key = (hosted.pk, hosted.backend, repr(sorted(hosted.settings.items())))
    if key not in _backends:
        _backends[key] = make_backend(hosted.backend, hosted.settings)
    return _backends[key]


def request_generation(hosted: HostedSystem) -> GenerationJob:
    """Queue a job for the generation workers once this transaction commits."""
    from .tasks import generate_outputs  # the task module imports this one

    job = GenerationJob.objects.create(hosted=hosted, items_total=missing_items(hosted).count())
    transaction.on_commit(lambda: generate_outputs.delay(job_id=job.pk))
    return job


def run_job(job: GenerationJob, on_batch=None) -> bool:
    """Generate every missing output of the job's system; False if another worker has it.
    `on_batch(job)` is called after each saved batch (the command prints progress with it)."""
    if not job.claim(timedelta(minutes=settings.GENERATION_STALE_MINUTES)):
        return False
    started = time.perf_counter()
    try:
        generate_missing(job, on_batch)
    except Exception as error:
        log.exception("generation job %s failed", job.pk)
        finish(job, GenerationJob.Status.FAILED, started, error=str(error)[:2000])
        raise
    finish(job, GenerationJob.Status.DONE, started)
    return True


def generate_missing(job: GenerationJob, on_batch=None) -> None:
    hosted = job.hosted
    todo = list(missing_items(hosted).values_list("id", "input_kind", "input_data"))
    GenerationJob.objects.filter(pk=job.pk).update(items_total=len(todo), items_done=0)
    job.items_total, job.items_done = len(todo), 0
    backend = backend_for(hosted)
    size = max(hosted.batch_size, 1)
    for start in range(0, len(todo), size):
        batch = todo[start : start + size]
        results = backend.generate([TypedInput(kind, data) for _, kind, data in batch])
        save_batch(job, batch, results)
        if on_batch:
            on_batch(job)


def save_batch(job: GenerationJob, batch: list, results: list) -> None:
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
        job.save(update_fields=["items_done", "outputs_created", "items_failed", "item_errors"])


def finish(job: GenerationJob, status: str, started: float, error: str = "") -> None:
    GenerationJob.objects.filter(pk=job.pk).update(
        status=status,
        finished_at=timezone.now(),
        seconds=time.perf_counter() - started,
        error=error,
    )
