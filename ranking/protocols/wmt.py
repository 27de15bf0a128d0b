"""WMT's view of direct assessments (WMT 2017-2019): each annotator's scores standardised,
a system's mean z, and clusters by one-sided Wilcoxon rank-sum tests. No resampling."""

from typing import Any

from ranking.engine import WmtRanking, wmt_protocol

from .base import (
    Datasheet,
    Presentation,
    RankingProtocol,
    ResultLine,
    ranks_scores,
    raw_or_none,
    six_decimals,
)


def result_fields(ranking: WmtRanking, index: int) -> dict[str, Any]:
    return {
        "cluster": int(ranking.cluster[index]),
        "mu": float(ranking.mean_z[index]),
        "rank_lo": int(ranking.rank_lo[index]),
        "rank_hi": int(ranking.rank_hi[index]),
        "comparisons": int(ranking.n_judgments[index]),
        "mean_raw": raw_or_none(ranking.mean_raw, index),
    }


def csv_cells(name: str, row: ResultLine) -> list:
    return [
        row.cluster,
        name,
        six_decimals(row.mean_raw),
        six_decimals(row.mu),
        row.rank_lo,
        row.rank_hi,
        row.comparisons,
    ]


def nothing_to_rank(ranking: WmtRanking) -> str:
    if len(ranking.order) >= 2:
        return ""
    return (
        "no z-scores yet for two systems: WMT's view needs annotators with at least two"
        " judgments that are not all equal"
    )


PROTOCOL = RankingProtocol(
    name="wmt",
    needs_comparisons=False,
    label="WMT z-scores with Wilcoxon rank-sum clusters",
    published="WMT 2017-2019 findings (Bojar et al.; Barrault et al.)",
    presentation=Presentation(
        "WMT's view: each annotator's scores standardised (z), a system's mean z, and"
        " clusters by one-sided Wilcoxon rank-sum tests between systems.",
        "ranking/table_wmt.html",
        "mean z",
        "Positions of each system's cluster, best first; shaded bands are Wilcoxon clusters",
    ),
    datasheet=Datasheet(
        aggregation="each annotator's scores standardised (z-scores; annotators with one"
        " judgment or all scores equal left out); systems by mean z, as WMT 2017-2019",
        significance="one-sided Wilcoxon rank-sum tests (p < 0.05): a cluster ends below a"
        " system significantly better than every system below it",
    ),
    rank=ranks_scores(wmt_protocol),
    result_fields=result_fields,
    csv_columns=("cluster", "system", "mean_raw", "mean_z", "rank_lo", "rank_hi", "judgments"),
    csv_cells=csv_cells,
    table_headers=("cluster", "mean z"),
    score_name="mean z-score",
    resamples=False,
    nothing_to_rank=nothing_to_rank,
)
