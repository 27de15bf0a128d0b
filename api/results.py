"""What the results endpoints return, read from stored rows: web requests never rank.

Each function costs a fixed number of queries whatever the campaign's size: one per
registered protocol for its runs and results, one per criterion for the monitor's figures.
"""

from datetime import datetime
from typing import Any

from django.utils import timezone

from annotation.models import Campaign, CampaignCriterion
from annotation.monitor import campaign_progress
from generation.models import GenerationJob
from ranking.agreement.models import RunAgreement
from ranking.automatic_metrics.service import latest_metric_run, metric_table
from ranking.models import RankingRun
from ranking.protocols import REGISTERED

RESULT_FIELDS = (
    "position",
    "cluster",
    "mu",
    "sigma",
    "mu_std",
    "ci_lo",
    "ci_hi",
    "rank_lo",
    "rank_hi",
    "comparisons",
)
AGREEMENT_FIELDS = ("alpha", "alpha_low", "alpha_high", "rounds", "units", "judgments")


def criterion_rankings(criterion: CampaignCriterion) -> dict[str, Any]:
    """The latest finished run of every registered protocol, with its table and agreement,
    and whether a newer one is on its way."""
    views = []
    for protocol in REGISTERED:
        runs = RankingRun.objects.for_criterion(criterion, protocol.name)
        run = runs.latest_done()
        nothing = runs.nothing_to_rank_now()
        views.append(
            {
                "protocol": protocol.name,
                "label": protocol.label,
                "run": run_summary(run) if run and nothing is None else None,
                "nothing_to_rank": nothing.nothing_to_rank_reason if nothing else None,
                "pending": runs.pending().exists(),
            }
        )
    return {
        "criterion": criterion.criterion,
        "is_open": criterion.is_open,
        "judgments_version": criterion.judgments_version,
        "views": views,
    }


def run_summary(run: RankingRun) -> dict[str, Any]:
    rows = run.results.order_by("position").values("system__name", *RESULT_FIELDS)
    agreement = RunAgreement.objects.filter(run=run).values(*AGREEMENT_FIELDS).first()
    return {
        "id": run.pk,
        "finished_at": run.finished_at,
        "judgments_version": run.judgments_version,
        "repetitions": run.repetitions,
        "judgments": run.judgments,
        "hits": run.hits,
        "comparisons": run.comparisons,
        "note": run.note,
        "systems": [{"system": row.pop("system__name"), **row} for row in rows],
        "agreement": agreement,
    }


def metrics(campaign: Campaign) -> dict[str, Any]:
    run = latest_metric_run(campaign)
    if run is None:
        return {"run": None, "metrics": [], "systems": []}
    table = metric_table(run)
    return {
        "run": {"id": run.pk, "finished_at": run.finished_at, "outputs": run.outputs},
        "metrics": table.metrics,
        "systems": [
            {"system": row.system, "values": row.values, "outputs": row.outputs}
            for row in table.rows
        ],
    }


def monitor(campaign: Campaign, now: datetime | None = None) -> list[dict[str, Any]]:
    return [
        {
            "criterion": p.criterion.criterion,
            "done": p.done,
            "imported": p.imported,
            "target": p.target,
            "share_done": p.share_done,
            "active_now": p.active_now,
            "last_hour": p.last_hour,
            "last_day": p.last_day,
            "median_seconds": p.median_seconds,
            "flagged_share": p.flagged_share,
            "failed_share": p.failed_share,
            "cost": str(p.cost),
            "cost_at_target": str(p.cost_at_target),
            "finish_at": p.finish_at,
        }
        for p in campaign_progress(campaign, now or timezone.now())
    ]


def generation_job(job: GenerationJob) -> dict[str, Any]:
    return {
        "id": job.pk,
        "system": job.hosted.system.name,
        "status": job.status,
        "items_total": job.items_total,
        "items_done": job.items_done,
        "outputs_created": job.outputs_created,
        "items_failed": job.items_failed,
        "item_errors": job.item_errors,
        "error": job.error,
        "queued_at": job.queued_at,
        "finished_at": job.finished_at,
    }
