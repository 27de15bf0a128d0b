"""What the ranking's fused view reads of a criterion's fused judge (Judge.fused): the
function that the setting RANKING_JUDGE_SCORES names (ranking/judge_scores.py), since
ranking may not import this app."""

import numpy as np
from django.db.models import Count, Max

from annotation.models import CampaignCriterion
from ranking.judge_scores import FusedJudge

from .export import FIGURES
from .models import Judge, JudgeScore


def scores_for_criterion(criterion: CampaignCriterion) -> FusedJudge | None:
    """The criterion's fused judge, in one query, with a version of its scores (they are
    only ever added or deleted, so their count and newest id tell every change, and the
    judge's id a switch to another); None without one."""
    found = (
        Judge.objects.filter(criterion=criterion, fused=True)
        .annotate(n=Count("scores"), newest=Max("scores__id"))
        .values_list("pk", "name", "n", "newest", "summary", "summary_at")
        .first()
    )
    if found is None:
        return None
    pk, name, n, newest, summary, summary_at = found
    return FusedJudge(
        name,
        f"{pk}:{n}:{newest or 0}",
        lambda: scores_of(pk),
        agreement=agreement_rows((summary or {}).get("agreement")),
        agreement_at=summary_at,
        judge_id=pk,
    )


def agreement_rows(found: dict | None) -> list[tuple]:
    """The figures of a stored agreement (judges.service.agreement), as the results page
    lists them: (description, value, lower, upper, count, what is counted)."""
    if not found:
        return []
    intervals = found.get("intervals") or {}
    rows = []
    for name, (label, counted) in FIGURES.items():
        if name in found:
            lower, upper = intervals.get(name) or (None, None)
            rows.append((label, found[name], lower, upper, found.get(counted), counted))
    return rows


def scores_of(judge_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(output ids, their system ids, the scores) of the judge's scores."""
    rows = JudgeScore.objects.filter(judge_id=judge_id).order_by("output_id")
    scored = list(rows.values_list("output_id", "output__system_id", "score"))
    return (
        np.array([output for output, _, _ in scored], dtype=np.int64),
        np.array([system for _, system, _ in scored], dtype=np.int64),
        np.array([score for _, _, score in scored], dtype=np.float64),
    )
