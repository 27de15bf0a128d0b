"""The platform's calibrated verdict (ranking/engine/calibrated.py): who was preferred within
each item, on each annotator's own scale, strengths by least squares, items as the
independent unit, and only the claims that hold for the whole table at once. The view the
results page, the API, the CSV and the rank command open on."""

from typing import Any

import numpy as np

from ranking.engine import Comparisons, Judgments
from ranking.engine.calibrated import (
    CalibratedRanking,
    calibrated_verdict,
    normal_scores,
)
from ranking.engine.progress import Progress
from ranking.engine.units import UnitPairs, with_units

from .base import Datasheet, Presentation, RankingProtocol, ResultLine, six_decimals

UNIT = (
    "the item: every page of one input shares its outputs (and E2E judged each output three"
    " times), so whole items are what the verdict's permutations move and its spread counts"
)


def rank(
    comparisons: Comparisons,
    n_systems: int,
    scores: Judgments,
    repetitions: int,
    seed: int,
    progress: Progress | None,
) -> CalibratedRanking:
    pairs, judged = cells(comparisons, scores, n_systems)
    return calibrated_verdict(pairs, n_systems, judged, repetitions, seed, progress)


def cells(
    comparisons: Comparisons, scores: Judgments, n_systems: int
) -> tuple[UnitPairs, np.ndarray]:
    """What the verdict compares, per item and pair: the scores of every page of the item
    together, each on its annotator's own scale (normal scores put annotators alike, so
    pages of one item compare across annotators: on pages of three DA outputs that found
    the better system 53% of the time against 48% within pages, benchmarks/calibration.py);
    the choices' comparisons (pairwise, best-worst), one win or tie each; and where the
    judgments carry no items (an old bundle), the comparisons, each its own unit."""
    if scores.choices is None and scores.hit is not None and scores.item is not None:
        value = normal_scores(scores.annotator, scores.score)
        pairs = UnitPairs.of_blocks(scores.system, value, scores.item, scores.item)
        return pairs, np.bincount(scores.system, minlength=n_systems)
    return UnitPairs.of(with_units(comparisons)), comparisons.per_system(n_systems)


def result_fields(ranking: CalibratedRanking, index: int) -> dict[str, Any]:
    return {
        "cluster": int(ranking.cluster[index]),
        "mu": float(ranking.strength[index]),
        "mu_std": float(ranking.std[index]),
        "ci_lo": none_if_nan(ranking.ci_lo[index]),
        "ci_hi": none_if_nan(ranking.ci_hi[index]),
        "rank_lo": int(ranking.rank_lo[index]),
        "rank_hi": int(ranking.rank_hi[index]),
        "comparisons": int(ranking.n_comparisons[index]),
    }


def none_if_nan(value: float) -> float | None:
    return None if value != value else float(value)


def csv_cells(name: str, row: ResultLine) -> list:
    return [
        row.cluster,
        name,
        six_decimals(row.mu),
        six_decimals(row.mu_std),
        six_decimals(row.ci_lo),
        six_decimals(row.ci_hi),
        row.rank_lo,
        row.rank_hi,
        row.comparisons,
    ]


def note(ranking: CalibratedRanking) -> str:
    """Too few permutations to claim anything: the smallest p-value is 1 / (B + 1)."""
    if np.isfinite(ranking.claims.critical):
        return ""
    return (
        f"With {ranking.permutations} permutations no claim can reach 95% (the smallest"
        " p-value is 1 / (permutations + 1), and cuts have 3% of the 5%): at least 33"
        " are needed; the sweep uses 200."
    )


def nothing_to_rank(ranking: CalibratedRanking) -> str:
    if len(ranking.order) >= 2:
        return ""
    return "no two systems judged together yet: on one page, or on pages of one item"


PROTOCOL = RankingProtocol(
    name="calibrated",
    needs_comparisons=False,
    label="Calibrated verdict (claims that hold for the whole table)",
    presentation=Presentation(
        "The platform's verdict: who was preferred within each item, on each annotator's"
        " own scale; strengths by least squares with whole items as the unit; an order claimed"
        " only where it holds for the whole table at 95% (on campaigns where no system"
        " differs, an order appears in about 5% of them at most). A cluster boundary says"
        " that every system above it beats every system below it.",
        "ranking/table_calibrated.html",
        "strength",
        "Ranks each system can hold, all at once at 95%; shaded bands are clusters",
        "Strength of each system; two intervals apart are a claimed difference (systems not"
        " told apart always overlap)",
    ),
    datasheet=Datasheet(
        aggregation="each annotator's scores as normal scores of their places among the"
        " annotator's own scores (choices: a win or a tie); within each item (all its"
        " pages) every two judgments' difference; strengths by least squares on those"
        " differences, an item's pairs weighted by 1 / its judgments, which is least"
        f" squares with a constant per item; the independent unit is {UNIT}",
        significance="every two systems' difference studentized by its cluster-robust"
        " standard error over items, against the same statistic with the system labels"
        " permuted within items; two kinds of claim sharing 5%: cuts (3%), where every"
        " system above a cut in the order beats every system below, tested step-down over"
        " the groups the cuts leave (min-p over groups, each pair across a cut beyond what"
        " one pair reaches among equals, the cuts' level shared among the disjoint pairs the"
        " groups hold), and pairs (2%), step-down by the largest"
        " |t| (Westfall and Young 1993): the whole table's chance of any false claim is at"
        " most 5% (measured: docs/calibration.md); rank sets from the claims (Mogstad et"
        " al. 2024); clusters where every system above is claimed better than every system"
        " below",
    ),
    rank=rank,
    result_fields=result_fields,
    csv_columns=(
        "cluster",
        "system",
        "strength",
        "strength_se",
        "ci_lo",
        "ci_hi",
        "rank_lo",
        "rank_hi",
        "comparisons",
    ),
    csv_cells=csv_cells,
    table_headers=("cluster", "strength"),
    score_name="strength",
    resample_word="permutations",
    nothing_to_rank=nothing_to_rank,
    note=note,
)
