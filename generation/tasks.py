from celery import shared_task

from jobs.claims import send_jobs_needing_a_worker

from .models import GenerationJob
from .service import run_job


# Routed to the "generation" queue (CELERY_TASK_ROUTES): GPU workers only.
@shared_task(name="generation.generate_outputs")
def generate_outputs(*, job_id: int) -> None:
    job = GenerationJob.objects.select_related("hosted__system").filter(pk=job_id).first()
    if job is None:
        return
    run_job(job)


@shared_task(name="generation.sweep")
def sweep() -> None:
    """Periodic (Celery beat, on the default queue): send again the generation jobs whose
    message or worker was lost."""
    send_jobs_needing_a_worker(GenerationJob)
