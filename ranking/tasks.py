from celery import shared_task

from .models import RankingRun
from .service import execute_run


@shared_task(name="ranking.compute_ranking")
def compute_ranking(*, run_id: int) -> None:
    run = RankingRun.objects.select_related("campaign").filter(pk=run_id).first()
    if run is None:
        return
    execute_run(run)
