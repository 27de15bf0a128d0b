"""Per-annotator z-scores of direct assessments, with the normalisation's choices explicit.

Two published procedures differ in four choices, each a field of `Normalisation`:

- WMT 2017-2019 (`WMT`, what ranking/engine/wmt.py computes): sample standard deviation
  (ddof=1); annotators with one judgment or all scores equal left out; a system's score the
  mean z of its judgments; clusters from one-sided Wilcoxon rank-sum tests (scipy's
  mannwhitneyu, normal approximation with tie and continuity correction), a cluster ending
  below a system significantly better than every system below it.
- WebNLG+ 2020 (`WEBNLG`, the organisers' notebook, challenge-2020 evaluation/human-evaluation/
  eval-scripts/en/english.ipynb): population standard deviation (ddof=0, scipy's zscore); an
  annotator whose scores are all equal (or who gave one) gets z = 0 (the notebook's
  nan_to_num); z and raw scores averaged per (item, system), then per system over its
  items; two-sided Wilcoxon rank-sum tests (scipy's ranksums: normal approximation, no tie
  or continuity correction) between the per-item mean z of two systems at p < 0.05, and
  the notebook's ranks: going down the systems by mean z, a system is placed one rank
  below any system above it that it differs from significantly, and never above the system
  just before it (`webnlg_ranks`).

One difference from the notebook: it gives a system that lacks an item a per-item mean of
0 for it (the mean of nothing, nan_to_num'd); here such a system simply has fewer items.
WebNLG+ 2020 had every system rate every sampled item, where the two agree.

Every annotator is standardised over everything they rated in the judgments given, which
are one criterion's. Where the items are not known (`Judgments.item` is None) each judgment
is its own item.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .judgments import Judgments
from .wmt import cluster_spans

SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class Normalisation:
    name: str
    ddof: int  # 0: population standard deviation; 1: sample
    # What an annotator without a standard deviation (all scores equal, or fewer than
    # ddof + 1 judgments) gets: z = 0, or left out.
    constant: Literal["zero", "leave_out"]
    per_item: bool  # average per (item, system) first, then per system over its items
    test: Literal["ranksums", "mannwhitneyu_greater"]
    clusters: Literal["webnlg", "wmt"]

    def describe(self) -> str:
        """The choices in words, for the results page and the datasheet."""
        spread = "population (ddof=0)" if self.ddof == 0 else f"sample (ddof={self.ddof})"
        constant = (
            "gets z = 0"
            if self.constant == "zero"
            else "is left out, with annotators of a single judgment"
        )
        averaged = (
            "z and raw scores averaged per item and system, then per system over its items"
            if self.per_item
            else "a system's mean z over its judgments"
        )
        unit = "per-item mean z" if self.per_item else "z-scores"
        test = (
            f"two-sided Wilcoxon rank-sum tests (scipy ranksums) on the {unit}"
            if self.test == "ranksums"
            else f"one-sided Wilcoxon rank-sum tests (Mann-Whitney U) on the {unit}"
        )
        rule = (
            "a system is ranked one below any system above it that it differs from"
            " significantly, never above the system before it (the WebNLG+ 2020 organisers'"
            " ranks)"
            if self.clusters == "webnlg"
            else "a cluster ends below a system significantly better than every system below it"
        )
        return (
            f"{self.name}: each annotator's scores z-normalised over everything they rated in"
            f" the criterion, {spread} standard deviation; an annotator whose scores are all"
            f" equal {constant}; {averaged}; clusters from {test} at p < {SIGNIFICANCE:g}:"
            f" {rule}."
        )


WMT = Normalisation("WMT 2017-2019", 1, "leave_out", False, "mannwhitneyu_greater", "wmt")
WEBNLG = Normalisation("WebNLG+ 2020", 0, "zero", True, "ranksums", "webnlg")


@dataclass(frozen=True)
class ZScoreRanking:
    """Per-system results, indexed by system number; a system without a z-score gets NaN,
    cluster 0 and no place in ``order``."""

    protocol: str
    normalisation: Normalisation
    mean_raw: np.ndarray  # float64[n]: the raw scores averaged as the z-scores are
    mean_z: np.ndarray  # float64[n]
    n_items: np.ndarray  # int64[n]: the values tested (items, or judgments if not per item)
    n_judgments: np.ndarray  # int64[n]: judgments with a z-score
    cluster: np.ndarray  # int64[n], 1 = best
    rank_lo: np.ndarray  # int64[n]: the positions the system's cluster spans
    rank_hi: np.ndarray  # int64[n]
    order: np.ndarray  # int64[ranked], best first by mean z (ties: lower number first)
    left_out: int  # judgments of annotators left out
    items_known: bool  # False: each judgment counted as its own item


def standardise(judgments: Judgments, ddof: int = 0, constant: str = "zero") -> np.ndarray:
    """float64[n]: each score minus its annotator's mean over their standard deviation
    (with `ddof`); where an annotator has none, 0 (`constant="zero"`) or NaN (left out)."""
    _, annotator, counts = np.unique(judgments.annotator, return_inverse=True, return_counts=True)
    mean = np.bincount(annotator, judgments.score) / counts
    deviation = judgments.score - mean[annotator]
    with np.errstate(divide="ignore", invalid="ignore"):
        std = np.sqrt(np.bincount(annotator, deviation**2) / (counts - ddof))
        z = deviation / std[annotator]
    # Equal scores may leave a rounding residue instead of an exact zero.
    without = (counts <= ddof) | ~(std > 1e-12 * np.maximum(np.abs(mean), 1.0))
    z[without[annotator]] = 0.0 if constant == "zero" else np.nan
    return z


def zscore_view(
    judgments: Judgments, n_systems: int, normalisation: Normalisation = WEBNLG
) -> ZScoreRanking:
    z = standardise(judgments, normalisation.ddof, normalisation.constant)
    kept = ~np.isnan(z)
    system, raw, z = judgments.system[kept], judgments.score[kept], z[kept]
    items_known = judgments.item is not None
    if normalisation.per_item and judgments.item is not None:
        pairs = np.stack([system.astype(np.int64), judgments.item[kept]], axis=1)
        unique, group = np.unique(pairs, axis=0, return_inverse=True)
        group = group.ravel()
        sizes = np.bincount(group, minlength=len(unique))
        group_system = unique[:, 0]
        group_raw = np.bincount(group, raw, minlength=len(unique)) / sizes
        group_z = np.bincount(group, z, minlength=len(unique)) / sizes
    else:
        group_system, group_raw, group_z = system.astype(np.int64), raw, z
    n_items = np.bincount(group_system, minlength=n_systems).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_raw = np.bincount(group_system, group_raw, minlength=n_systems) / n_items
        mean_z = np.bincount(group_system, group_z, minlength=n_systems) / n_items
    ranked = np.flatnonzero(n_items > 0)
    order = ranked[np.argsort(-mean_z[ranked], kind="stable")]
    samples = [group_z[group_system == s] for s in order]
    in_order = ranks_in_order(samples, normalisation)
    cluster = np.zeros(n_systems, dtype=np.int64)
    rank_lo, rank_hi = np.zeros_like(cluster), np.zeros_like(cluster)
    if len(order):
        cluster[order] = in_order
        rank_lo[order], rank_hi[order] = cluster_spans(in_order)
    return ZScoreRanking(
        protocol="webnlg" if normalisation == WEBNLG else "zscores",
        normalisation=normalisation,
        mean_raw=mean_raw,
        mean_z=mean_z,
        n_items=n_items,
        n_judgments=np.bincount(system, minlength=n_systems).astype(np.int64),
        cluster=cluster,
        rank_lo=rank_lo,
        rank_hi=rank_hi,
        order=order,
        left_out=int((~kept).sum()),
        items_known=items_known,
    )


def webnlg_view(judgments: Judgments, n_systems: int) -> ZScoreRanking:
    """The WebNLG+ 2020 organisers' z-scores, ranks and clusters (`WEBNLG`)."""
    return zscore_view(judgments, n_systems, WEBNLG)


def ranks_in_order(samples: list[np.ndarray], normalisation: Normalisation) -> np.ndarray:
    """Cluster numbers (1 = best) of systems given best first by mean z, with their values."""
    from scipy.stats import mannwhitneyu, ranksums  # noqa: PLC0415 - scipy loads slowly

    means = [float(values.mean()) for values in samples]

    def different(upper: int, lower: int) -> bool:
        # An order is claimed only in the direction of the means, never between equal ones.
        if not means[upper] > means[lower]:
            return False
        if normalisation.test == "ranksums":
            return bool(ranksums(samples[upper], samples[lower]).pvalue < SIGNIFICANCE)
        test = mannwhitneyu(
            samples[upper], samples[lower], alternative="greater", method="asymptotic"
        )
        return bool(test.pvalue < SIGNIFICANCE)

    if normalisation.clusters == "webnlg":
        return webnlg_ranks(len(samples), different)
    n = len(samples)
    ends = [all(different(i, j) for j in range(i + 1, n)) for i in range(n - 1)]
    return 1 + np.concatenate(([0], np.cumsum(ends, dtype=np.int64)))[:n]


def webnlg_ranks(n: int, different: Callable[[int, int], bool]) -> np.ndarray:
    """The WebNLG+ 2020 notebook's ranks (`rank_systems`) of n systems best first: for each
    system in turn, every system below it that differs from it significantly is placed one
    rank below it, and any other that stands above the system just before it is moved down
    to that system's rank. The ranks then rise by at most one from a system to the next."""
    rank = np.ones(n, dtype=np.int64)
    for upper in range(n):
        for lower in range(upper + 1, n):
            if different(upper, lower):
                rank[lower] = rank[upper] + 1
            elif rank[lower] < rank[lower - 1]:
                rank[lower] = rank[lower - 1]
    return rank
