"""WMT's direct-assessment view: per-annotator z-scores and Wilcoxon rank-sum clusters.

As the WMT 2017-2019 findings rank systems (and as Knowles's replication of their tables,
nrc-cnrc/WMT-Stability ``scripts/get_ranking.py``, computes it):

- Each annotator's scores are standardised: minus the annotator's mean, divided by their
  standard deviation (sample, ddof=1), both over all the annotator's judgments here. An
  annotator with a single judgment, or with every score equal, has no standard deviation to
  divide by; WMT leaves their scores out, and so does this.
- A system's score is the mean z of its judgments (WMT's "Ave z").
- Systems are ordered by that score. System A is significantly better than B when a
  one-sided Wilcoxon rank-sum (Mann-Whitney U) test of A's outputs' z-scores against B's
  gives p < 0.05 (normal approximation with tie and continuity correction, as scipy
  computed it for WMT; WMT's scipy, before 1.7, reported the smaller one-sided p whatever
  the direction, this tests the direction of the order).
- The tests compare outputs, not judgments: WMT averages repeated judgments of one segment
  by a system first, and so does this (an output's judgments share the output; E2E judged
  each three times, and testing them as independent ordered systems that are the same).
- A cluster boundary falls below a system that is significantly better than every system
  below it: the lines of WMT's tables, by the rule of the replication above, which gives
  back the findings' clusters. Only the last system above a line is tested against every
  system under it; the order by mean z stands in for the others.
- Rank range: the positions its cluster spans, as WMT's tables give a cluster's ranks.
"""

from dataclasses import dataclass

import numpy as np

from .judgments import Judgments

SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class WmtRanking:
    """Per-system results, indexed by system number. Systems without z-scores (all their
    judgments from annotators who are left out) get NaN and no place in ``order``."""

    protocol: str
    mean_z: np.ndarray  # float64[n]
    n_judgments: np.ndarray  # int64[n]: z-scores per system
    cluster: np.ndarray  # int64[n], 1 = best; 0 for a system without z-scores
    rank_lo: np.ndarray  # int64[n]
    rank_hi: np.ndarray  # int64[n]
    order: np.ndarray  # int64[ranked], best first by mean z
    left_out: int  # judgments of annotators without a standard deviation
    # float64[n]: the mean raw score of the judgments with a z-score (NaN without any)
    mean_raw: np.ndarray | None = None


def z_scores(judgments: Judgments) -> np.ndarray:
    """float64[n]: each score standardised by its annotator; NaN for the annotators left out."""
    _, annotator, counts = np.unique(judgments.annotator, return_inverse=True, return_counts=True)
    mean = np.bincount(annotator, judgments.score) / counts
    deviation = judgments.score - mean[annotator]
    with np.errstate(divide="ignore", invalid="ignore"):
        std = np.sqrt(np.bincount(annotator, deviation**2) / (counts - 1))
        z = deviation / std[annotator]
    # Equal scores may leave a rounding residue instead of an exact zero.
    constant = std <= 1e-12 * np.maximum(np.abs(mean), 1.0)
    z[(counts < 2)[annotator] | constant[annotator]] = np.nan
    return z


def wmt_protocol(judgments: Judgments, n_systems: int) -> WmtRanking:
    z = z_scores(judgments)
    kept = ~np.isnan(z)
    by_system = np.argsort(judgments.system[kept], kind="stable")
    n_judgments = np.bincount(judgments.system[kept], minlength=n_systems).astype(np.int64)
    per_system = np.split(z[kept][by_system], np.cumsum(n_judgments)[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_z = np.array([scores.mean() if len(scores) else np.nan for scores in per_system])
        raw = np.bincount(judgments.system[kept], judgments.score[kept], minlength=n_systems)
        mean_raw = raw / n_judgments
    ranked = np.flatnonzero(n_judgments > 0)
    order = ranked[np.argsort(-mean_z[ranked], kind="stable")]
    tested = output_means(judgments, z, n_systems)
    in_order = clusters_in_order([tested[s] for s in order])
    cluster = np.zeros(n_systems, dtype=np.int64)
    cluster[order] = in_order
    rank_lo, rank_hi = np.zeros_like(cluster), np.zeros_like(cluster)
    rank_lo[order], rank_hi[order] = cluster_spans(in_order)
    return WmtRanking(
        protocol="wmt",
        mean_z=mean_z,
        n_judgments=n_judgments,
        cluster=cluster,
        rank_lo=rank_lo,
        rank_hi=rank_hi,
        order=order,
        left_out=int((~kept).sum()),
        mean_raw=mean_raw,
    )


def output_means(judgments: Judgments, z: np.ndarray, n_systems: int) -> list[np.ndarray]:
    """Per system, the mean z of each of its outputs (an item's output of the system): what
    the rank-sum tests compare, as WMT averages repeated judgments of a segment first. The
    judgments of one output share it, so they are not independent of each other; without
    the items each judgment stands alone."""
    kept = ~np.isnan(z)
    system = judgments.system[kept].astype(np.int64)
    if judgments.item is None:
        key = np.arange(int(kept.sum()))
    else:
        key = judgments.item[kept] * n_systems + system
    outputs, where = np.unique(key, return_inverse=True)
    means = np.bincount(where, z[kept]) / np.bincount(where)
    output_system = outputs % n_systems if judgments.item is not None else system
    return [means[output_system == s] for s in range(n_systems)]


def significantly_better(upper: np.ndarray, lower: np.ndarray) -> bool:
    """One-sided Wilcoxon rank-sum test: are ``upper``'s z-scores stochastically greater?"""
    from scipy.stats import mannwhitneyu  # noqa: PLC0415 - scipy loads slowly

    test = mannwhitneyu(upper, lower, alternative="greater", method="asymptotic")
    return bool(test.pvalue < SIGNIFICANCE)


def clusters_in_order(z_best_first: list[np.ndarray]) -> np.ndarray:
    """Cluster numbers (1 = best) of systems given best first: a boundary below each system
    that is significantly better than every system below it."""
    n = len(z_best_first)
    ends = [
        all(significantly_better(z_best_first[i], z_best_first[j]) for j in range(i + 1, n))
        for i in range(n - 1)
    ]
    return 1 + np.concatenate(([0], np.cumsum(ends, dtype=np.int64)))[:n]


def cluster_spans(cluster: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For clusters numbered in order, each system's first and last position (1-based) of
    its cluster."""
    positions = np.arange(1, len(cluster) + 1)
    first = {c: positions[cluster == c].min() for c in np.unique(cluster)}
    last = {c: positions[cluster == c].max() for c in np.unique(cluster)}
    return (
        np.array([first[c] for c in cluster], dtype=np.int64),
        np.array([last[c] for c in cluster], dtype=np.int64),
    )
