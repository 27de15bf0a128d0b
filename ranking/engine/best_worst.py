"""Best-worst scaling of RankME HITs, as the pairwise and best-worst studies report it
(Louviere et al. 2015; the RotoWire human evaluation of Puduppully and Lapata 2021 and its
ReproHum reproductions):

- In each HIT the outputs with the highest score are its best, those with the lowest its
  worst; a HIT whose scores are all equal names neither (it says nothing of the order).
- A system's score is 100 x (times best - times worst) / its judgments, from -100 to 100.
- Significance: each judgment is +1 (best), -1 (worst) or 0; a one-way ANOVA over the
  systems' values, then Tukey's HSD between every two systems (p < 0.05), each only where
  the ANOVA finds a difference. A system with fewer than two judgments is never found
  different. Where every system's values are constant the differences of means are exact:
  different means are significant, equal ones are not. The values being +1, -1 and 0,
  both tests are computed from each system's counts, with exact sums of squares: a ranking
  kept up to date by adding up new judgments equals one computed
  afresh.
- Systems are ordered by score; a cluster ends below a system significantly better than
  every system below it (the rule of WMT's tables); the rank range is the positions its
  cluster spans. Systems without judgments get no place (cluster 0).
"""

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .choices import NONE, Choices
from .judgments import Judgments
from .wmt import cluster_spans

SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class BestWorstRanking:
    """Per-system results, indexed by system number."""

    protocol: str
    score: np.ndarray  # float64[n]: 100 (best - worst) / judgments; NaN without judgments
    best: np.ndarray  # int64[n]
    worst: np.ndarray  # int64[n]
    n_judgments: np.ndarray  # int64[n]
    cluster: np.ndarray  # int64[n], 1 = best; 0 for a system without judgments
    rank_lo: np.ndarray  # int64[n]
    rank_hi: np.ndarray  # int64[n]
    order: np.ndarray  # int64[ranked], best first
    invalid: int = 0  # judgments left out (best_worst_choices: Choices.valid)


def best_worst_values(judgments: Judgments) -> np.ndarray:
    """int64[n]: +1 for a judgment that is its HIT's best, -1 for its worst, else 0."""
    if judgments.hit is None:
        raise ValueError("best-worst scaling compares within HITs: the judgments need their hit")
    _, hit = np.unique(judgments.hit, return_inverse=True)
    top = np.full(hit.max(initial=-1) + 1, -np.inf)
    bottom = np.full_like(top, np.inf)
    np.maximum.at(top, hit, judgments.score)
    np.minimum.at(bottom, hit, judgments.score)
    decided = top[hit] > bottom[hit]
    best = decided & (judgments.score == top[hit])
    worst = decided & (judgments.score == bottom[hit])
    return best.astype(np.int64) - worst.astype(np.int64)


def best_worst_view(judgments: Judgments, n_systems: int) -> BestWorstRanking:
    """The best-worst view of a criterion: of its choices (pairwise or best-worst of k)
    where the judgments carry them, else of the scores within each HIT."""
    if judgments.choices is not None:
        return best_worst_choices(judgments.choices, n_systems)
    return best_worst_protocol(judgments, n_systems)


def best_worst_protocol(judgments: Judgments, n_systems: int) -> BestWorstRanking:
    values = best_worst_values(judgments)
    system = judgments.system
    n_judgments = np.bincount(system, minlength=n_systems).astype(np.int64)
    best = np.bincount(system, values == 1, minlength=n_systems).astype(np.int64)
    worst = np.bincount(system, values == -1, minlength=n_systems).astype(np.int64)
    return best_worst_of_counts(best, worst, n_judgments)


def best_worst_of_counts(
    best: np.ndarray, worst: np.ndarray, n_judgments: np.ndarray
) -> BestWorstRanking:
    """The view from each system's times best, times worst and judgments alone: its values
    are +1, -1 and 0, so these counts are all its ANOVA and Tukey's HSD need
    (significance_of_counts), and counts added up as judgments come give the same ranking."""
    with np.errstate(invalid="ignore", divide="ignore"):
        score = 100.0 * (best - worst) / n_judgments
    ranked = np.flatnonzero(n_judgments > 0)
    order = ranked[np.argsort(-score[ranked], kind="stable")]
    better = significance_of_counts(best, worst, n_judgments)
    in_order = clusters_in_order(order, better)
    cluster = np.zeros(len(n_judgments), dtype=np.int64)
    cluster[order] = in_order
    rank_lo, rank_hi = np.zeros_like(cluster), np.zeros_like(cluster)
    if len(order):
        rank_lo[order], rank_hi[order] = cluster_spans(in_order)
    return BestWorstRanking(
        protocol="bws",
        score=score,
        best=best,
        worst=worst,
        n_judgments=n_judgments,
        cluster=cluster,
        rank_lo=rank_lo,
        rank_hi=rank_hi,
        order=order,
    )


def significance(groups: list[np.ndarray]) -> Callable[[int, int], bool]:
    """better(a, b): is system a significantly better than system b (ANOVA, then Tukey)?"""
    from scipy.stats import f_oneway  # noqa: PLC0415 - scipy loads slowly

    testable = [s for s, values in enumerate(groups) if len(values) >= 2]
    if len(testable) < 2:
        return lambda a, b: False
    samples = [groups[s] for s in testable]
    with warnings.catch_warnings():
        # Constant groups: scipy warns and answers inf (means differ) or NaN (they do not).
        warnings.simplefilter("ignore")
        anova = f_oneway(*samples)
    if not anova.pvalue < SIGNIFICANCE:  # NaN too: no difference to find
        return lambda a, b: False
    p = TukeyPValues(samples)
    where = {s: i for i, s in enumerate(testable)}
    means = {s: float(groups[s].mean()) for s in testable}

    def better(a: int, b: int) -> bool:
        if a not in where or b not in where:
            return False
        return means[a] > means[b] and bool(p(where[a], where[b]) < SIGNIFICANCE)

    return better


def significance_of_counts(
    best: np.ndarray, worst: np.ndarray, n_judgments: np.ndarray
) -> Callable[[int, int], bool]:
    """significance() of groups of +1 (best), -1 (worst) and 0 values, from their counts:
    the sums of squares are exact fractions (Fraction), so the answer does not depend on the
    order the values came in, and the F test and the HSD see what scipy's f_oneway and
    tukey_hsd compute from the values, up to their rounding."""
    from scipy.stats import f as f_distribution  # noqa: PLC0415 - scipy loads slowly

    testable = [s for s in range(len(n_judgments)) if n_judgments[s] >= 2]
    if len(testable) < 2:
        return lambda a, b: False
    sizes = [int(n_judgments[s]) for s in testable]
    sums = [int(best[s]) - int(worst[s]) for s in testable]
    squares = [int(best[s]) + int(worst[s]) for s in testable]
    total, count, groups = sum(sums), sum(sizes), len(testable)
    # Per group, the sum of squares about its mean and its sum's square over its size.
    explained = [Fraction(x * x, n) for x, n in zip(sums, sizes, strict=True)]
    within = sum(q - e for q, e in zip(squares, explained, strict=True))
    between = sum(explained) - Fraction(total**2, count)
    if within == 0:  # constant groups: f_oneway's inf (means differ) or NaN (they do not)
        anova_p = 0.0 if between > 0 else float("nan")
    else:
        ratio = (between / (groups - 1)) / (within / (count - groups))
        anova_p = float(f_distribution.sf(float(ratio), groups - 1, count - groups))
    if not anova_p < SIGNIFICANCE:
        return lambda a, b: False
    means = {s: Fraction(x, n) for s, x, n in zip(testable, sums, sizes, strict=True)}
    p = TukeyPValues.of_moments(
        np.array([float(means[s]) for s in testable]),
        np.array(sizes),
        float(within / (count - groups)),
    )
    where = {s: i for i, s in enumerate(testable)}

    def better(a: int, b: int) -> bool:
        if a not in where or b not in where:
            return False
        return means[a] > means[b] and bool(p(where[a], where[b]) < SIGNIFICANCE)

    return better


class TukeyPValues:
    """Tukey's HSD p-value of two groups, as scipy.stats.tukey_hsd(*samples).pvalue[i, j]
    holds it (the same operations, so the same number), computed when asked: each is a
    numerical integration of tens of milliseconds, tukey_hsd computes all k^2 of them (21
    systems: seconds), and the clusters ask for a few dozen."""

    def __init__(self, samples: list[np.ndarray]) -> None:
        means = np.asarray([np.mean(sample) for sample in samples])
        sizes = np.asarray([sample.size for sample in samples])
        observations = np.sum(sizes)
        variances = np.asarray([np.var(sample, ddof=1) for sample in samples])
        mse = np.sum(variances * (sizes - 1)) / (observations - len(samples))
        self._prepare(means, sizes, mse)

    @classmethod
    def of_moments(cls, means: np.ndarray, sizes: np.ndarray, mse: float) -> "TukeyPValues":
        """From the groups' means and sizes and the mean squared error within them."""
        p = cls.__new__(cls)
        p._prepare(means, sizes, mse)
        return p

    def _prepare(self, means: np.ndarray, sizes: np.ndarray, mse: float) -> None:
        observations = np.sum(sizes)
        if np.unique(sizes).size == 1:
            normalize = np.full((len(means), len(means)), 2 / sizes[0])
        else:
            normalize = 1 / sizes + 1 / sizes[None].T
        with np.errstate(divide="ignore", invalid="ignore"):
            self.t_stat = np.abs(means[None].T - means) / np.sqrt(normalize * mse / 2)
        self.groups, self.df = len(means), observations - len(means)
        self.known: dict[tuple[int, int], float] = {}

    def __call__(self, i: int, j: int) -> float:
        from scipy.stats import studentized_range  # noqa: PLC0415 - scipy loads slowly

        if (i, j) not in self.known:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = studentized_range.sf(self.t_stat[i, j], self.groups, self.df)
            self.known[i, j] = float(value)
        return self.known[i, j]


def clusters_in_order(order: np.ndarray, better: Callable[[int, int], bool]) -> np.ndarray:
    """Cluster numbers (1 = best) of the systems in `order`: a boundary below each system
    significantly better than every system below it."""
    n = len(order)
    ends = [all(better(order[i], order[j]) for j in range(i + 1, n)) for i in range(n - 1)]
    return 1 + np.concatenate(([0], np.cumsum(ends, dtype=np.int64)))[:n]


# Choices: pairwise preferences and best-worst of k ---------------------------------------------


def best_worst_choices(choices: Choices, n_systems: int) -> BestWorstRanking:
    """Best-worst scores of pairwise or best-worst-of-k judgments, as the RotoWire study
    (Puduppully and Lapata 2021) and its ReproHum reproductions report them:

    - a system's score is 100 x (times best - times worst) / times shown, over the valid
      judgments (Choices.valid); a pairwise tie is shown for both, best and worst for
      neither;
    - significance: a one-way ANOVA over the systems' per-item scores (the same score over
      one item's judgments), then Tukey's HSD between every two (p < 0.05);
    - systems ordered by score; a cluster ends below a system significantly better than
      every system below it; a system's rank range runs from 1 + the systems significantly
      better than it to the ranked systems less those significantly worse, so that no order
      is claimed that the HSD does not find.
    """
    valid = choices.valid()
    shown = choices.shown[valid]
    used = shown != NONE
    system = shown[used]
    item = np.broadcast_to(choices.item[valid][:, None], shown.shape)[used]
    value = (shown == choices.best[valid][:, None]).astype(np.int64)[used]
    value -= (shown == choices.worst[valid][:, None]).astype(np.int64)[used]
    n_shown = np.bincount(system, minlength=n_systems).astype(np.int64)
    best = np.bincount(system, value == 1, minlength=n_systems).astype(np.int64)
    worst = np.bincount(system, value == -1, minlength=n_systems).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = 100.0 * (best - worst) / n_shown
    ranked = np.flatnonzero(n_shown > 0)
    order = ranked[np.argsort(-score[ranked], kind="stable")]
    better = significance(per_item_scores(system, item, value, n_systems))
    in_order = clusters_in_order(order, better)
    cluster = np.zeros(n_systems, dtype=np.int64)
    cluster[order] = in_order
    rank_lo, rank_hi = np.zeros_like(cluster), np.zeros_like(cluster)
    for s in order:
        rank_lo[s] = 1 + sum(better(t, s) for t in order)
        rank_hi[s] = len(order) - sum(better(s, t) for t in order)
    return BestWorstRanking(
        protocol="bws",
        score=score,
        best=best,
        worst=worst,
        n_judgments=n_shown,
        cluster=cluster,
        rank_lo=rank_lo,
        rank_hi=rank_hi,
        order=order,
        invalid=int((~valid).sum()),
    )


def per_item_scores(
    system: np.ndarray, item: np.ndarray, value: np.ndarray, n_systems: int
) -> list[np.ndarray]:
    """Per system, its score on each item it was shown with: 100 x (best - worst) / shown
    over that item's judgments (`value` +1 best, -1 worst, 0 neither, one per showing)."""
    pairs = np.stack([system.astype(np.int64), item.astype(np.int64)], axis=1)
    if len(pairs) == 0:
        return [np.empty(0) for _ in range(n_systems)]
    unique, group = np.unique(pairs, axis=0, return_inverse=True)
    group = group.ravel()
    scores = 100.0 * np.bincount(group, value) / np.bincount(group)
    return [scores[unique[:, 0] == s] for s in range(n_systems)]
