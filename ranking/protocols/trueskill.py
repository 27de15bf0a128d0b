"""TrueSkill over the pairwise comparisons, repeated R times: the E2E protocol (as E2E
Table 11) and the plain bootstrap. Both report mean mu, 95% rank ranges and clusters."""

from collections.abc import Callable
from typing import Any

from ranking.charts import RANK_CHART_TITLE
from ranking.engine import Comparisons, Ranking, RunsResult, summarise
from ranking.engine.clusters import summarise_claims
from ranking.engine.progress import Progress
from ranking.engine.trueskill_runs import bootstrap_protocol, e2e_protocol

from .base import (
    NO_ORDER_WITHOUT_EVIDENCE,
    Datasheet,
    Presentation,
    RankingProtocol,
    ResultLine,
    ranks_comparisons,
    six_decimals,
)

PAIRS = (
    "each HIT's k scores give k(k-1)/2 pairwise comparisons (the higher score wins, equal "
    "scores draw; only the order is used)"
)
CLUSTERS = (
    "95% rank ranges over the R runs (ranks trimmed at both ends) and significance clusters: "
    "a cluster ends below a system whose worst rank is better than the best rank of every "
    f"system below it; {NO_ORDER_WITHOUT_EVIDENCE}"
)


def result_fields(ranking: Ranking, index: int) -> dict[str, Any]:
    return {
        "cluster": int(ranking.cluster[index]),
        "mu": float(ranking.mean_mu[index]),
        "sigma": float(ranking.mean_sigma[index]),
        "mu_std": float(ranking.std_mu[index]),
        "rank_lo": int(ranking.rank_lo[index]),
        "rank_hi": int(ranking.rank_hi[index]),
        "comparisons": int(ranking.n_comparisons[index]),
    }


def csv_cells(name: str, row: ResultLine) -> list:
    return [
        row.cluster,
        name,
        six_decimals(row.mu),
        six_decimals(row.mu_std),
        row.rank_lo,
        row.rank_hi,
        row.comparisons,
    ]


RunsSummary = Callable[[RunsResult, Comparisons, int], Ranking]


def summarised(
    engine: Callable[..., RunsResult], summary: RunsSummary
) -> Callable[[Comparisons, int, int, int, Progress | None], Ranking]:
    """R runs of `engine` summarised by `summary` (of the runs, the comparisons and the
    number of systems)."""

    def rank(
        comparisons: Comparisons,
        n_systems: int,
        repetitions: int,
        seed: int,
        progress: Progress | None,
    ) -> Ranking:
        runs = engine(comparisons, n_systems, repetitions, seed, progress)
        return summary(runs, comparisons, n_systems)

    return rank


def as_e2e(runs: RunsResult, comparisons: Comparisons, n_systems: int) -> Ranking:
    """R TrueSkill runs summarised as E2E: mean mu, trimmed rank ranges and clusters, where
    systems in pieces of the comparison graph are not ordered across pieces."""
    return summarise(runs, components=comparisons.components(n_systems))


def trueskill_protocol(
    name: str,
    label: str,
    summary: str,
    aggregation: str,
    rank: Callable[..., Ranking],
    significance: str,
    published: str = "",
    template: str = "ranking/table_trueskill.html",
    chart_title: str = RANK_CHART_TITLE,
):
    return RankingProtocol(
        name=name,
        label=label,
        presentation=Presentation(summary, template, "μ", chart_title),
        datasheet=Datasheet(aggregation=aggregation, significance=significance),
        rank=ranks_comparisons(rank),
        published=published,
        result_fields=result_fields,
        # mu_std, the spread of mu over the runs, as the page shows it beside mu. TrueSkill's
        # own sigma is not exported: under the E2E protocol its beta grows with the
        # comparisons, so it hardly moves from 0.5, and the page calls it meaningless.
        csv_columns=("cluster", "system", "mu", "mu_std", "rank_lo", "rank_hi", "comparisons"),
        csv_cells=csv_cells,
        score_name="TrueSkill mu (mean over runs)",
        heavy=True,
    )


E2E = trueskill_protocol(
    "e2e",
    "E2E protocol (Sakaguchi et al. 2014, as E2E Table 11)",
    "The published procedure of the E2E NLG Challenge (2018), to the letter, for"
    " reproduction: TrueSkill where each update takes the least certain system and an"
    " opponent of similar μ; repeated runs give rank ranges and clusters.",
    f"{PAIRS}; TrueSkill over them, R runs of the E2E protocol (Sakaguchi et al. 2014: each "
    "update takes the system with the largest sigma and a near opponent); systems by mean mu",
    summarised(e2e_protocol, as_e2e),
    CLUSTERS,
    published="E2E NLG Challenge 2018 (Dušek et al. 2020, Table 11)",
)

BOOTSTRAP = trueskill_protocol(
    "bootstrap",
    "TrueSkill over resampled items (claims that hold for the whole table)",
    "TrueSkill over whole items drawn with replacement (the comparisons of an input's pages"
    " stay together); repeated runs give each system's spread, and an order is claimed"
    " only where it holds for the whole table at 95%.",
    f"{PAIRS}; TrueSkill over them, R runs, each over the comparisons of U items drawn with"
    " replacement (U the items judged); systems by mean mu",
    summarised(bootstrap_protocol, summarise_claims),  # claims for the whole table
    "every two systems' difference in mean mu over its spread across the runs, Student's t"
    " with U - 1 degrees of freedom, Holm's step-down over all pairs (the whole table's"
    " chance of any false claim at most 5%); rank sets from the claims, clusters where"
    " every system above is claimed better than every system below",
    template="ranking/table_bootstrap.html",
    chart_title="Ranks each system can hold, all at once at 95%; shaded bands are clusters",
)

# The registry holds both (ranking/protocols/__init__.py).
VIEWS = (E2E, BOOTSTRAP)
