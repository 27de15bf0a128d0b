"""Bradley-Terry ratings (Chatbot Arena's model and scale) from the pairwise comparisons,
their spread over resamples of whole items, and only the claims that hold for the whole
table (ranking/engine/bradley_terry.py)."""

from typing import Any

from ranking.engine import BradleyTerryRanking, bradley_terry_protocol

from .base import (
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
        "cluster": int(ranking.cluster[index]),
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
    label="Bradley-Terry over resampled items (claims that hold for the whole table)",
    presentation=Presentation(
        "Bradley-Terry ratings on Chatbot Arena's scale, their spread over resamples of whole"
        " items, and an order claimed only where it holds for the whole table at 95%: a"
        " system's rank is 1 + the systems claimed better.",
        "ranking/table_bt.html",
        "BT rating",
        "Ranks each system can hold, all at once at 95%; shaded bands are clusters",
        "Bradley-Terry rating of each system; two intervals apart are a claimed difference",
    ),
    datasheet=Datasheet(
        aggregation=f"{PAIRS}; Bradley-Terry ratings fit to them (a draw half a win each way),"
        " on Chatbot Arena's scale",
        significance="R resamples of whole items (every comparison of a drawn item, as often"
        " as it was drawn); every two systems' difference over its spread across them,"
        " Student's t with U - 1 degrees of freedom (U items), Holm's step-down over all pairs"
        " compared directly or through others (the whole table's chance of any false claim"
        " at most 5%); rank: 1 + the systems claimed better; rank sets and clusters from the"
        " claims; intervals that are apart only for a claimed pair",
    ),
    rank=ranks_comparisons(bradley_terry_protocol),
    result_fields=result_fields,
    csv_columns=(
        "cluster",
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
    table_headers=("cluster", "rating"),
    score_name="Bradley-Terry rating",
    resample_word="resamples of the items",
    note=note,
)
