from celery import shared_task

from jobs.claims import send_jobs_needing_a_worker

from .attention import record_due_verdicts
from .models import PublishedLoad, UploadJob
from .prolific import poll_studies
from .published_uploads import execute_published_load
from .uploads import execute_upload


@shared_task(name="annotation.sweep")
def sweep() -> None:
    """Periodic (Celery beat): bring the attention checks' verdicts up to date, leaving
    out of rankings the annotators who failed them; send again the uploads whose message
    or worker was lost, and the published datasets' loads too."""
    record_due_verdicts()
    send_jobs_needing_a_worker(UploadJob)
    send_jobs_needing_a_worker(PublishedLoad)


@shared_task(name="annotation.poll_prolific")
def poll_prolific() -> None:
    """Periodic (Celery beat), on the "outbound" queue: ask Prolific which new participants
    are in their studies, so that their work counts. Apart from the sweep, so that a slow
    API holds no worker that rankings need."""
    poll_studies()


@shared_task(name="annotation.import_upload")
def import_upload(*, job_id: int) -> None:
    job = UploadJob.objects.select_related("campaign", "created_by").filter(pk=job_id).first()
    if job is None:
        return
    execute_upload(job)


@shared_task(name="annotation.load_published")
def load_published(*, job_id: int) -> None:
    job = PublishedLoad.objects.select_related("created_by").filter(pk=job_id).first()
    if job is None:
        return
    execute_published_load(job)
