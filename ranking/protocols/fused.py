"""Humans and an automatic judge fused by prediction-powered inference (PPI++, issue 29):
per system the estimate of its mean human score (per-annotator z-scores, as WMT's view)
from the crowd's judgments of a sample of its outputs and the judge's scores of all of them,
with a 95% interval; rank ranges and clusters from the intervals, claiming no order where
they overlap (ranking/engine/fusion.py). The humans-only interval is stored beside it.

The judge's scores come with the judgments (Judgments.judge and .output): the service adds
those of the criterion's fused judge (ranking/judge_scores.py); without them the view has
nothing to rank. No resampling."""

from dataclasses import dataclass
from typing import Any

import numpy as np

from ranking.engine import Judgments
from ranking.engine.fusion import FusedRanking, fused_ranking, humans_only_ranking

from .base import (
    Datasheet,
    Presentation,
    RankingProtocol,
    ResultLine,
    ranks_scores,
    raw_or_none,
    six_decimals,
)

NAME = "fused"
NO_JUDGE = "no fused judge: the fused view needs an automatic judge's scores of the outputs"


@dataclass(frozen=True)
class FusedView:
    """The fused ranking and the humans-only one over the same outputs (None without a
    judge), the judge's name and the judgments left out: those of outputs it has not
    scored (PPI++ needs the judge's score of every output a human judged)."""

    fused: FusedRanking | None
    humans: FusedRanking | None
    judge: str = ""
    unscored: int = 0

    @property
    def order(self) -> np.ndarray:
        return self.fused.order if self.fused is not None else np.empty(0, dtype=np.int64)


def standardised(scores: np.ndarray) -> np.ndarray:
    """The judge's scores on the z-scores' scale, using no human score: minus their mean,
    over their standard deviation (as judges.service.fused_rows puts them)."""
    spread = scores.std()
    return (scores - scores.mean()) / (spread if spread > 0 else 1.0)


def fuse(judgments: Judgments, n_systems: int) -> FusedView:
    judge = judgments.judge
    if judge is None or judgments.output is None:
        return FusedView(None, None)
    # The judge's outputs numbered 0..M-1 in its order; each judgment to its output's number.
    by_id = np.argsort(judge.output, kind="stable")
    ids = judge.output[by_id]
    at = np.minimum(np.searchsorted(ids, judgments.output), max(len(ids) - 1, 0))
    scored = (ids[at] == judgments.output) if len(ids) else np.zeros(len(judgments), bool)
    humans = (
        by_id[at[scored]],
        judgments.annotator[scored],
        judgments.score[scored],
        n_systems,
    )
    return FusedView(
        fused_ranking(judge.system, standardised(judge.score), *humans),
        humans_only_ranking(judge.system, *humans),
        judge.name,
        int((~scored).sum()),
    )


def result_fields(view: FusedView, index: int) -> dict[str, Any]:
    fused, humans = view.fused, view.humans
    assert fused is not None and humans is not None  # order is empty without them
    return {
        "cluster": int(fused.cluster[index]),
        "mu": float(fused.estimate[index]),
        "mu_std": float(fused.std_error[index]),
        "ci_lo": float(fused.lower[index]),
        "ci_hi": float(fused.upper[index]),
        "rank_lo": int(fused.rank_lo[index]),
        "rank_hi": int(fused.rank_hi[index]),
        "comparisons": int(fused.judgments[index]),
        "effective_judgments": raw_or_none(fused.effective_judgments, index),
        "humans_ci_lo": raw_or_none(humans.lower, index),
        "humans_ci_hi": raw_or_none(humans.upper, index),
    }


def csv_cells(name: str, row: ResultLine) -> list:
    return [
        row.cluster,
        name,
        six_decimals(row.mu),
        six_decimals(row.ci_lo),
        six_decimals(row.ci_hi),
        row.rank_lo,
        row.rank_hi,
        row.comparisons,
        None if row.effective_judgments is None else f"{row.effective_judgments:.1f}",
        six_decimals(row.humans_ci_lo),
        six_decimals(row.humans_ci_hi),
    ]


def nothing_to_rank(view: FusedView) -> str:
    if view.fused is None:
        return NO_JUDGE
    if len(view.order) >= 2:
        return ""
    return (
        "no two systems yet with two outputs that both the judge and the crowd scored (with"
        " z-scores: annotators with at least two judgments that are not all equal)"
    )


def note(view: FusedView) -> str:
    if view.fused is None or not len(view.order):
        return ""
    weight = float(view.fused.weight[view.order[0]])
    said = f"Judge {view.judge}: weight λ = {weight:.2f} (0: the humans alone)."
    if view.unscored:
        said += (
            f" {view.unscored} judgment{'s' if view.unscored != 1 else ''} of outputs the"
            " judge has not scored left out."
        )
    return said


PROTOCOL = RankingProtocol(
    name=NAME,
    needs_comparisons=False,
    label="Humans + judge (PPI++)",
    presentation=Presentation(
        "The crowd's scores fused with an automatic judge's by prediction-powered inference"
        " (PPI++): the judge scores every output, the humans a sample, and the humans' mean"
        " is estimated from both, with a 95% interval never much wider than the humans'"
        " alone and narrower the better the judge tracks them.",
        "ranking/table_fused.html",
        "fused mean z",
        "Rank ranges from the 95% intervals: no order claimed where they overlap",
        "Fused mean z with 95% intervals",
    ),
    datasheet=Datasheet(
        aggregation="each annotator's scores standardised (z-scores, as WMT), averaged per"
        " output; per system, the mean over its outputs estimated by prediction-powered"
        " inference (PPI++, Angelopoulos et al. 2023) from the humans' scores of the outputs"
        " they judged and an automatic judge's scores of all outputs (standardised), with one"
        " power-tuned weight for all systems, clipped to [0, 1]",
        significance="95% intervals (Student's t with n - 1 degrees of freedom, n the system's"
        " outputs judged by humans); a system's best rank is 1 plus the systems whose interval"
        " lies wholly above its own, its worst the number of systems minus those wholly below;"
        " clusters from those rank ranges; where intervals overlap no order is claimed",
    ),
    rank=ranks_scores(fuse),
    result_fields=result_fields,
    csv_columns=(
        "cluster",
        "system",
        "fused_mean_z",
        "ci_lo",
        "ci_hi",
        "rank_lo",
        "rank_hi",
        "judgments",
        "effective_judgments",
        "humans_only_ci_lo",
        "humans_only_ci_hi",
    ),
    csv_cells=csv_cells,
    table_headers=("cluster", "fused z"),
    score_name="fused mean z-score (PPI++)",
    resamples=False,
    nothing_to_rank=nothing_to_rank,
    note=note,
    uses_judge=True,
)
