from celery import shared_task

from .attention import record_due_verdicts


@shared_task(name="annotation.sweep")
def sweep() -> None:
    """Periodic (Celery beat): bring the attention checks' verdicts up to date, leaving
    out of rankings the annotators who failed them."""
    record_due_verdicts()
