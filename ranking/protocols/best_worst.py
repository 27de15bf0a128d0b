"""Best-worst scaling of the HITs: each HIT's best and worst outputs, a system's score
100 x (best - worst) / judgments, clusters by ANOVA and Tukey's HSD (ranking/engine/
best_worst.py). No resampling."""

from typing import Any

from ranking.engine.best_worst import BestWorstRanking, best_worst_protocol

from .base import Datasheet, Presentation, RankingProtocol, ResultLine, ranks_scores, six_decimals


def result_fields(ranking: BestWorstRanking, index: int) -> dict[str, Any]:
    return {
        "cluster": int(ranking.cluster[index]),
        "mu": float(ranking.score[index]),
        "rank_lo": int(ranking.rank_lo[index]),
        "rank_hi": int(ranking.rank_hi[index]),
        "comparisons": int(ranking.n_judgments[index]),
    }


def csv_cells(name: str, row: ResultLine) -> list:
    return [row.cluster, name, six_decimals(row.mu), row.rank_lo, row.rank_hi, row.comparisons]


PROTOCOL = RankingProtocol(
    name="bws",
    label="Best-worst scaling with Tukey HSD clusters",
    presentation=Presentation(
        "Best-worst scaling: in each HIT the highest-scored outputs are its best and the"
        " lowest its worst; a system's score is 100 × (times best − times worst) /"
        " judgments, with clusters by ANOVA and Tukey's HSD.",
        "ranking/table_bws.html",
        "best−worst",
        "Positions of each system's cluster, best first; shaded bands are Tukey HSD clusters",
    ),
    datasheet=Datasheet(
        aggregation="in each HIT the outputs with the highest score are its best, those with"
        " the lowest its worst (a HIT of equal scores names neither); a system's score is"
        " 100 x (times best - times worst) / its judgments",
        significance="one-way ANOVA over the judgments' best (+1), worst (-1) or neither (0),"
        " then Tukey's HSD between every two systems (p < 0.05); a cluster ends below a"
        " system significantly better than every system below it",
    ),
    rank=ranks_scores(best_worst_protocol),
    result_fields=result_fields,
    csv_columns=("cluster", "system", "score", "rank_lo", "rank_hi", "judgments"),
    csv_cells=csv_cells,
    table_headers=("cluster", "b-w"),
    resamples=False,
    score_name="best-worst score",
)
