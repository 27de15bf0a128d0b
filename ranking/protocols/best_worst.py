"""Best-worst scaling: of pairwise and best-worst-of-k judgments where a criterion collects
them (the best and worst chosen; per-item ANOVA and Tukey's HSD), else of the HITs' scores
(each HIT's best and worst outputs; per-judgment ANOVA and Tukey's HSD). A system's score is
100 x (best - worst) / judgments (ranking/engine/best_worst.py). No resampling."""

from typing import Any

from ranking.engine.best_worst import BestWorstRanking, best_worst_view

from .base import Datasheet, Presentation, RankingProtocol, ResultLine, ranks_scores, six_decimals


def result_fields(ranking: BestWorstRanking, index: int) -> dict[str, Any]:
    return {
        "cluster": int(ranking.cluster[index]),
        "mu": float(ranking.score[index]),
        "rank_lo": int(ranking.rank_lo[index]),
        "rank_hi": int(ranking.rank_hi[index]),
        "comparisons": int(ranking.n_judgments[index]),
        "wins": int(ranking.best[index]),
        "losses": int(ranking.worst[index]),
    }


def csv_cells(name: str, row: ResultLine) -> list:
    return [
        row.cluster,
        name,
        six_decimals(row.mu),
        row.wins,
        row.losses,
        row.rank_lo,
        row.rank_hi,
        row.comparisons,
    ]


def note(ranking: BestWorstRanking) -> str:
    if not ranking.invalid:
        return ""
    return (
        f"{ranking.invalid} judgment(s) left out as not valid: fewer than two distinct"
        " systems shown, or a best or worst that is missing, repeated or not among them."
    )


PROTOCOL = RankingProtocol(
    name="bws",
    label="Best-worst scaling with Tukey HSD clusters",
    published="best-worst scaling as Puduppully and Lapata (2021) report it",
    presentation=Presentation(
        "Best-worst scaling: the outputs chosen best and worst (pairwise or best-worst"
        " judgments) or, for scores, in each HIT the highest-scored outputs and the lowest;"
        " a system's score is 100 × (times best − times worst) / judgments, with clusters by"
        " ANOVA and Tukey's HSD.",
        "ranking/table_bws.html",
        "best−worst",
        "Positions of each system's cluster, best first; shaded bands are Tukey HSD clusters",
    ),
    datasheet=Datasheet(
        aggregation="in each HIT the outputs with the highest score are its best, those with"
        " the lowest its worst (a HIT of equal scores names neither); for pairwise and"
        " best-worst judgments, the outputs chosen best and worst (a tie names neither); a"
        " system's score is 100 x (times best - times worst) / its judgments",
        significance="one-way ANOVA over the judgments' best (+1), worst (-1) or neither (0)"
        " (for pairwise and best-worst judgments: over each system's per-item scores), then"
        " Tukey's HSD between every two systems (p < 0.05); a cluster ends below a system"
        " significantly better than every system below it",
    ),
    rank=ranks_scores(best_worst_view),
    result_fields=result_fields,
    csv_columns=(
        "cluster",
        "system",
        "score",
        "wins",
        "losses",
        "rank_lo",
        "rank_hi",
        "judgments",
    ),
    csv_cells=csv_cells,
    table_headers=("cluster", "b-w"),
    resamples=False,
    score_name="best-worst score",
    note=note,
)
