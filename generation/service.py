"""Generation jobs: ask a hosted system's backend for the outputs its campaign lacks.

Outputs are written batch by batch as they come, so a worker killed half-way loses only the
batch in flight; a rerun generates only what is still missing, and the unique constraint on
(item, system) keeps two workers racing for one item from writing it twice.
"""

import time

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Subquery
from django.db.models.expressions import NegatedExpression
from django.db.models.functions import Coalesce

from annotation.models import CampaignCriterion, Item, Output
from annotation.secret_env import secret_env_policy
from generation.backends import Backend, TypedInput, make_backend
from jobs.claims import Heartbeat, work_as_holder

from .endpoints import endpoint_policy
from .models import GenerationJob, HostedSystem

MAX_ITEM_ERRORS = 50
_backends: dict[tuple, Backend] = {}


def lacks_output_of(system) -> NegatedExpression:
    """For filtering items: no output of `system` (an id, or a reference to an outer
    query's system) yet. What a hosted system generates, and what its admin counts."""
    return ~Exists(Output.objects.filter(item=OuterRef("pk"), system=system))


def missing_items(hosted: HostedSystem):
    campaign_items = Item.objects.filter(campaign_id=hosted.system.campaign_id)
    return campaign_items.filter(lacks_output_of(hosted.system_id)).order_by("id")


def missing_items_count() -> Coalesce:
    """The number of missing items, as an annotation of HostedSystem rows."""
    items = Item.objects.filter(campaign=OuterRef("system__campaign"))
    missing = items.filter(lacks_output_of(OuterRef(OuterRef("system"))))
    return _count(missing, "campaign")


def output_count() -> Coalesce:
    """The number of outputs of the system, as an annotation of HostedSystem rows."""
    return _count(Output.objects.filter(system=OuterRef("system")), "system")


def _count(rows, group: str) -> Coalesce:
    counted = rows.order_by().values(group).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted), 0)


def backend_for(hosted: HostedSystem) -> Backend:
    """One backend per worker process and configuration: a model is loaded once and kept."""
    # The worker checks too: rows may predate the rules, or the host resolve elsewhere now.
    secret_env, endpoints = secret_env_policy(), endpoint_policy()
    key = (hosted.pk, hosted.backend, repr(sorted(hosted.settings.items())), secret_env, endpoints)
    if key not in _backends:
        _backends[key] = make_backend(hosted.backend, hosted.settings, secret_env, endpoints)
    return _backends[key]


def new_job(hosted: HostedSystem) -> GenerationJob:
    """A queued job for what the system lacks now (a worker counts again when it starts)."""
    return GenerationJob.objects.create(hosted=hosted, items_total=missing_items(hosted).count())


def request_generation(hosted: HostedSystem) -> GenerationJob:
    """Queue a job for the generation workers once this transaction commits, or give back
    the system's job that is queued or running already: one job at a time per system."""
    with transaction.atomic():
        # The hosted system's row is the lock on PostgreSQL; SQLite's transactions take the
        # write lock at once (settings), so two requests cannot both find no job waiting.
        HostedSystem.objects.select_for_update().filter(pk=hosted.pk).order_by("pk").first()
        waiting = hosted.jobs.unfinished().first()
        if waiting is not None:
            return waiting
        job = new_job(hosted)
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

    def seconds() -> dict:
        return {"seconds": time.perf_counter() - started}

    def work(heartbeat: Heartbeat) -> None:
        generate_missing(job, token, heartbeat, on_batch)
        job.finish_as_holder(token, GenerationJob.Status.DONE, error="", **seconds())

    return work_as_holder(job, token, work, failure_fields=seconds)


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
