from celery import shared_task

from .models import GenerationJob
from .service import run_job


# Routed to the "generation" queue by CELERY_TASK_ROUTES ("generation.*"): GPU workers only.
@shared_task(name="generation.generate_outputs")
def generate_outputs(*, job_id: int) -> None:
    job = GenerationJob.objects.select_related("hosted__system").filter(pk=job_id).first()
    if job is None:
        return
    run_job(job)
