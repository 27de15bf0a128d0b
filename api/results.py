"""What the results endpoints return, read from stored rows: web requests never rank.

Each function costs a fixed number of queries whatever the campaign's size: a few per
protocol that fits the criterion's form for its runs and results, one per criterion for the
monitor's figures.
"""

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone

from annotation.models import Campaign, CampaignCriterion
from annotation.monitor import campaign_progress
from generation.models import GenerationJob
from ranking.agreement.models import RunAgreement
from ranking.automatic_metrics.service import latest_metric_run, metric_table
from ranking.models import RankingRun
from ranking.protocols import DEFAULT, PROTOCOLS, RankingProtocol
from ranking.service import fitting_protocols

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
    """The latest finished run of every protocol that fits the criterion's judgment form
    (the views the sweep computes for it), with its table and agreement, and whether a newer
    one is on its way."""
    views = []
    for name in fitting_protocols(criterion):
        protocol = PROTOCOLS[name]
        runs = RankingRun.objects.for_criterion(criterion, protocol.name)
        run = runs.latest_done()
        nothing = runs.nothing_to_rank_now()
        views.append(
            {
                "protocol": protocol.name,
                "label": protocol.label,
                "score_name": protocol.score_name,
                "published": protocol.published,
                "run": run_summary(run, protocol) if run and nothing is None else None,
                "nothing_to_rank": nothing.nothing_to_rank_reason if nothing else None,
                "pending": runs.pending().exists(),
            }
        )
    return {
        "criterion": criterion.name,
        "form": criterion.form,
        "is_open": criterion.is_open,
        "judgments_version": criterion.judgments_version,
        "default_view": DEFAULT,
        "views": views,
    }


def run_summary(run: RankingRun, protocol: RankingProtocol) -> dict[str, Any]:
    rows = list(run.results.select_related("system").order_by("position"))
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
        "systems": [
            {
                "system": row.system.name,
                "key": row.system.key,
                **{field: getattr(row, field) for field in RESULT_FIELDS},
            }
            for row in rows
        ],
        "columns": list(protocol.csv_columns),
        "table": [csv_record(protocol, row.system.name, row) for row in rows],
        "agreement": agreement,
        "null_permutations": run.null_permutations,
        "null_ordered": run.null_ordered,
    }


def csv_record(protocol: RankingProtocol, name: str, row) -> dict[str, Any]:
    """A system's line of the protocol's CSV (ranking/export.py), by column, as JSON
    numbers (to the CSV's six decimals where it rounds)."""
    cells = protocol.csv_cells(name, row)
    values = [float(cell) if isinstance(cell, Decimal) else cell for cell in cells]
    return dict(zip(protocol.csv_columns, values, strict=True))


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
            "criterion": p.criterion.name,
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
