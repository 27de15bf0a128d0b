from celery import shared_task

from .attention import record_due_verdicts
from .prolific import poll_studies


@shared_task(name="annotation.sweep")
def sweep() -> None:
    """Periodic (Celery beat): bring the attention checks' verdicts up to date, leaving
    out of rankings the annotators who failed them; ask Prolific which new participants
    are in their studies, so that their work counts."""
    record_due_verdicts()
    poll_studies()
