from celery import shared_task

from jobs.claims import send_jobs_needing_a_worker

from .models import JudgeJob
from .service import run_judge_job


# Routed to the "generation" queue (CELERY_TASK_ROUTES): an LLM judge needs what a hosted
# system needs.
@shared_task(name="judges.judge_outputs")
def judge_outputs(*, job_id: int) -> None:
    job = JudgeJob.objects.select_related("judge__criterion").filter(pk=job_id).first()
    if job is None:
        return
    run_judge_job(job)


@shared_task(name="judges.sweep")
def sweep() -> None:
    """Periodic (Celery beat, on the default queue): send again the judge jobs whose
    message or worker was lost."""
    send_jobs_needing_a_worker(JudgeJob)
