"""Bradley-Terry as Chatbot Arena: maximum-likelihood ratings from the pairwise comparisons,
95% intervals from bootstrap resamples, and Arena's rank."""

from typing import Any

from ranking.engine import BradleyTerryRanking, bradley_terry_protocol

from .base import (
    NO_ORDER_WITHOUT_EVIDENCE,
    Datasheet,
    Presentation,
    RankingProtocol,
    ResultLine,
    ranks_comparisons,
    six_decimals,
)
from .trueskill import PAIRS


def result_fields(ranking: BradleyTerryRanking, index: int) -> dict[str, Any]:
    return {
        "cluster": int(ranking.rank[index]),
        "mu": float(ranking.rating[index]),
        "mu_std": float(ranking.rating_std[index]),
        "ci_lo": float(ranking.ci_lo[index]),
        "ci_hi": float(ranking.ci_hi[index]),
        "rank_lo": int(ranking.rank_lo[index]),
        "rank_hi": int(ranking.rank_hi[index]),
        "comparisons": int(ranking.n_comparisons[index]),
    }


def csv_cells(name: str, row: ResultLine) -> list:
    return [
        row.cluster,
        name,
        six_decimals(row.mu),
        six_decimals(row.ci_lo),
        six_decimals(row.ci_hi),
        six_decimals(row.mu_std),
        row.rank_lo,
        row.rank_hi,
        row.comparisons,
    ]


def note(ranking: BradleyTerryRanking) -> str:
    """Fits that needed virtual draws: their ratings rest partly on them."""
    if not ranking.augmented_rounds:
        return ""  # the data's own fit needs them only if every resample does
    where = f"{ranking.augmented_rounds} of {ranking.rounds} resamples"
    if ranking.augmented_full_fit:
        where = f"the comparisons themselves and in all {ranking.rounds} resamples"
    return (
        f"In {where}, some systems never lost, or never won, against the others, so no"
        " finite maximum-likelihood rating exists; those fits add one virtual draw between"
        " every two systems. Read their ratings and intervals as rough: more judgments"
        " remove the need."
    )


PROTOCOL = RankingProtocol(
    name="bt",
    label="Bradley-Terry with bootstrap intervals (as Chatbot Arena)",
    presentation=Presentation(
        "Bradley-Terry as Chatbot Arena: maximum-likelihood ratings from the pairwise"
        " comparisons with 95% bootstrap intervals; a system's rank is 1 + the number of"
        " systems significantly better.",
        "ranking/table_bt.html",
        "BT rating",
        "95% rank range of each system over the bootstrap resamples, in Arena's order;"
        " shaded bands are systems of one rank",
        "Bradley-Terry rating of each system with its 95% bootstrap interval",
    ),
    datasheet=Datasheet(
        aggregation=f"{PAIRS}; Bradley-Terry ratings fit to them (a draw half a win each way),"
        " on Chatbot Arena's scale",
        significance="95% intervals of the rating from R bootstrap resamples; Arena's rank: 1 +"
        " the number of systems whose interval lies wholly above, among those compared with it"
        " directly or through others; 95% rank ranges over the resamples, where"
        f" {NO_ORDER_WITHOUT_EVIDENCE}",
    ),
    rank=ranks_comparisons(bradley_terry_protocol),
    result_fields=result_fields,
    csv_columns=(
        "rank",
        "system",
        "rating",
        "ci_lo",
        "ci_hi",
        "rating_std",
        "rank_lo",
        "rank_hi",
        "comparisons",
    ),
    csv_cells=csv_cells,
    table_headers=("rank", "rating"),
    score_name="Bradley-Terry rating",
    resample_word="bootstrap resamples",
    note=note,
    summed=True,
)
