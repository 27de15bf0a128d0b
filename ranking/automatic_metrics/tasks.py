from celery import shared_task

from .models import MetricRun
from .service import execute_metric_run


# The name it had when it was ranking's: queued messages, the "long" queue's route
# (settings.CELERY_TASK_ROUTES) and MetricRun.task_name all use it.
@shared_task(name="ranking.compute_metrics")
def compute_metrics(*, run_id: int) -> None:
    run = MetricRun.objects.select_related("campaign").filter(pk=run_id).first()
    if run is None:
        return
    execute_metric_run(run)
