from celery import shared_task

from jobs.claims import send_jobs_needing_a_worker
from ranking.automatic_metrics.models import MetricRun

from .batch import execute_queued_runs
from .models import RankingRun
from .service import queue_due_rankings


@shared_task(name="ranking.compute_ranking")
def compute_ranking(*, run_id: int) -> None:
    run = RankingRun.objects.select_related("campaign").filter(pk=run_id).first()
    if run is None:
        return
    execute_queued_runs(run)


@shared_task(name="ranking.sweep")
def sweep() -> None:
    """Periodic (Celery beat): queue the rankings that changed judgments call for, and send
    again the runs whose message or worker was lost, metric runs included (one sweep for
    the ranking package, as the beat schedule has always had)."""
    queue_due_rankings()
    send_jobs_needing_a_worker(RankingRun)
    send_jobs_needing_a_worker(MetricRun)
