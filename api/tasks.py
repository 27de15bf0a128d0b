from celery import shared_task

from .webhooks import deliver, drop_switched_off, record_due_events, send_due


@shared_task(name="api.sweep")
def sweep() -> None:
    """Periodic (Celery beat): record the webhook deliveries that new events call for, drop
    those of endpoints switched off, and hand those due (new ones, retries whose wait is
    over, lost ones) to the workers of the outbound queue."""
    record_due_events()
    drop_switched_off()
    send_due()


@shared_task(name="api.deliver_webhook")
def deliver_webhook(*, delivery_id: int) -> None:
    """On the "outbound" queue (settings.CELERY_TASK_ROUTES): a slow receiver holds only
    that queue's workers, each for at most WEBHOOK_TIMEOUT_SECONDS."""
    deliver(delivery_id)
