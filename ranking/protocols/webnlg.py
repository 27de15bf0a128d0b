"""The WebNLG+ 2020 organisers' view of direct assessments: each annotator's scores
z-normalised (population standard deviation, an annotator of equal scores at z = 0),
averaged per item, then per system; two-sided Wilcoxon rank-sum tests between the systems'
per-item mean z and the organisers' ranks (ranking/engine/zscores.py, WEBNLG). No resampling.
Each system's mean raw score (ZScoreRanking.mean_raw), averaged the same way, is stored
beside its mean z."""

from typing import Any

from ranking.engine.zscores import WEBNLG, ZScoreRanking, webnlg_view

from .base import Datasheet, Presentation, RankingProtocol, ranks_scores, raw_or_none
from .wmt import csv_cells  # the same columns as WMT's view, items in place of judgments


def result_fields(ranking: ZScoreRanking, index: int) -> dict[str, Any]:
    return {
        "cluster": int(ranking.cluster[index]),
        "mu": float(ranking.mean_z[index]),
        "rank_lo": int(ranking.rank_lo[index]),
        "rank_hi": int(ranking.rank_hi[index]),
        "comparisons": int(ranking.n_items[index]),
        "mean_raw": raw_or_none(ranking.mean_raw, index),
    }


def nothing_to_rank(ranking: ZScoreRanking) -> str:
    if len(ranking.order) >= 2:
        return ""
    return "no scores yet for two systems: the WebNLG view ranks scored judgments"


def note(ranking: ZScoreRanking) -> str:
    if ranking.items_known:
        return ""
    return (
        "The judgments' items were not known: each judgment counted as its own item, so the"
        " means are per judgment rather than per item."
    )


PROTOCOL = RankingProtocol(
    name="webnlg",
    needs_comparisons=False,
    label="WebNLG+ 2020 z-scores with Wilcoxon rank-sum clusters",
    published="WebNLG+ 2020 (Castro Ferreira et al. 2020)",
    presentation=Presentation(
        WEBNLG.describe(),
        "ranking/table_webnlg.html",
        "mean z",
        "Positions of each system's cluster, best first; shaded bands are Wilcoxon clusters",
    ),
    datasheet=Datasheet(
        aggregation="each annotator's scores z-normalised over everything they rated in the"
        " criterion (population standard deviation; an annotator whose scores are all equal"
        " gets z = 0), averaged per item and system, then per system over its items, as the"
        " WebNLG+ 2020 organisers did",
        significance="two-sided Wilcoxon rank-sum tests (p < 0.05) between the systems'"
        " per-item mean z; going down the systems by mean z, a system is ranked one below"
        " any system above it that it differs from significantly, never above the system"
        " before it",
    ),
    rank=ranks_scores(webnlg_view),
    result_fields=result_fields,
    csv_columns=("cluster", "system", "mean_raw", "mean_z", "rank_lo", "rank_hi", "items"),
    csv_cells=csv_cells,
    table_headers=("cluster", "mean z"),
    score_name="mean z-score (per item)",
    resamples=False,
    nothing_to_rank=nothing_to_rank,
    note=note,
)
