"""A criterion's runs ranked in turn by one worker, from one read of the judgments.

The sweep queues a run per view when a criterion's judgments change, and sends one message
for them all (service.request_rankings). The worker that takes it ranks that run, then each
run of the criterion still queued, claimed one by one as any run is (jobs/claims.py): a run
another worker took meanwhile is left to it. Their input is read once (service.SharedRead),
while the judgments version holds.
"""

import logging
import threading

from django.conf import settings
from django.db import connection
from django.utils import timezone

from .models import RankingRun
from .service import SharedRead, after_ranking, execute_run_sharing

log = logging.getLogger(__name__)


def execute_queued_runs(run: RankingRun) -> bool:
    """The worker's task: `run`, then the other runs of its criterion still queued (the
    rest of the sweep's views of the change, in the order queued), each claimed in turn and
    ranked from the same read of the judgments while their version holds. False if another
    worker has `run`."""
    shared = SharedRead()
    if not execute_run_sharing(run, shared):
        return False
    tried = {run.pk}
    with KeptAsSent(run, tried):
        while (sibling := next_queued_sibling(run, tried)) is not None:
            tried.add(sibling.pk)
            execute_run_sharing(sibling, shared)
    after_ranking(run, shared)
    return True


def next_queued_sibling(run: RankingRun, tried: set[int]) -> RankingRun | None:
    return queued_siblings(run, tried).select_related("campaign").first()


def queued_siblings(run: RankingRun, tried: set[int]):
    return (
        RankingRun.objects.filter(criterion_id=run.criterion_id, status=RankingRun.Status.QUEUED)
        .exclude(pk__in=tried)
        .order_by("pk")
    )


class KeptAsSent:
    """While a worker ranks a criterion's runs in turn, the ones still waiting for it are
    marked sent every JOB_HEARTBEAT_SECONDS, from a thread: the sweep then leaves them to
    this worker rather than handing them to another (which would read the judgments again
    and compete for the cores), and sends them again JOB_RESEND_SECONDS after it died."""

    def __init__(self, run: RankingRun, tried: set[int]) -> None:
        self.run, self.tried = run, tried
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._keep, daemon=True, name=f"batch-{run.pk}")

    def __enter__(self) -> "KeptAsSent":
        self.mark()
        # Inside a transaction (a test) another connection could not see the rows.
        if not connection.in_atomic_block:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def mark(self) -> None:
        queued_siblings(self.run, set(self.tried)).update(sent_at=timezone.now())

    def _keep(self) -> None:
        try:
            while not self._stop.wait(settings.JOB_HEARTBEAT_SECONDS):
                try:
                    self.mark()
                except Exception:  # a dropped connection: the next beat reconnects
                    log.warning("marking the runs after %s failed", self.run.pk, exc_info=True)
                    connection.close()
        finally:
            connection.close()  # this thread's own connection
