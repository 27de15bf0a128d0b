from celery import shared_task

from .webhooks import deliver, record_due_events, send_due


@shared_task(name="api.sweep")
def sweep() -> None:
    """Periodic (Celery beat): record the webhook deliveries that new events call for, and
    hand those due (new ones, retries whose wait is over, lost ones) to the workers."""
    record_due_events()
    send_due()


@shared_task(name="api.deliver_webhook")
def deliver_webhook(*, delivery_id: int) -> None:
    deliver(delivery_id)
