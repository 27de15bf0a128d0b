"""From R runs of final ratings to rank ranges, significance clusters and a ranking."""

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .comparisons import Comparisons
from .joint import PairStatistics, resampled_claims
from .trueskill import TrueSkillParams
from .trueskill_runs import RunsResult
from .units import UnitPairs, with_units


@dataclass(frozen=True)
class Ranking:
    """Per-system summary of R runs; every array is indexed by system number.

    ``mean_sigma`` is the mean over runs of each run's final TrueSkill sigma: the
    uncertainty of a single run's estimate under the model, not the spread of mu across
    runs (that is ``std_mu``, population standard deviation as in wmt-trueskill). With the
    E2E protocol's beta (which grows with the number of comparisons) sigma barely moves
    from 0.5 and says little; ``std_mu`` and the rank ranges are the noise to read.
    """

    protocol: str
    params: TrueSkillParams
    runs: int
    seed: int | None
    mean_mu: np.ndarray  # float64[n]
    mean_sigma: np.ndarray  # float64[n]
    std_mu: np.ndarray  # float64[n]
    rank_lo: np.ndarray  # int64[n], best rank of the 95% range (1 = top); see rank_ranges
    rank_hi: np.ndarray  # int64[n], worst rank of the range
    cluster: np.ndarray  # int64[n], 1 = best
    n_comparisons: np.ndarray  # int64[n]
    order: np.ndarray  # int64[n], system numbers best first (by mean mu, stable)
    pairs: PairStatistics | None = None  # the unit bootstrap's claims (summarise_claims)


def ranks_per_run(mu_runs: np.ndarray) -> np.ndarray:
    """Rank of every system in every run, 1 = highest mu; ties go to the lower index."""
    order = np.argsort(-mu_runs, axis=1, kind="stable")
    ranks = np.empty_like(order)
    positions = np.broadcast_to(np.arange(1, mu_runs.shape[1] + 1), order.shape)
    np.put_along_axis(ranks, order, positions, axis=1)
    return ranks


def trimmed_per_end(runs: int, confidence: float = 0.95) -> int:
    """ceil((R - confidence * R) / 2) computed exactly (R = 200 gives 5, not 6).

    At least one rank is kept: for R < 3 nothing is dropped.
    """
    drop = Fraction(runs) * (1 - Fraction(str(confidence))) / 2
    return min(-(-drop.numerator // drop.denominator), (runs - 1) // 2)


# Scores this close (relative to the run's largest) are equal: a fit's rounding residue
# must not decide an order that the data leave open.
TIE_TOLERANCE = 1e-9


def rank_bounds_per_run(
    values: np.ndarray, components: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst rank each system can claim in each run (int64[R, n] each, 1 = top).

    Without ties and with one connected comparison graph both are ranks_per_run. Equal
    values share the span of their tie (three systems tied for the top: 1 to 3 each), as
    nothing tells them apart. ``components`` labels each system's piece of the comparison
    graph (see comparisons.components): systems of other pieces were never compared with
    it, directly or through others, so each may be above or below it and widens its worst
    rank; only those of its own piece place it."""
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[1]
    if components is None:
        components = np.zeros(n, dtype=np.int64)
    tolerance = TIE_TOLERANCE * np.maximum(1.0, np.abs(values).max(axis=1, keepdims=True))
    best = np.empty(values.shape, dtype=np.int64)
    worst = np.empty(values.shape, dtype=np.int64)
    for s in range(n):
        same = components == components[s]
        own = values[:, same]
        best[:, s] = 1 + (own > values[:, s : s + 1] + tolerance[:, :1]).sum(axis=1)
        worst[:, s] = (own >= values[:, s : s + 1] - tolerance[:, :1]).sum(axis=1)
        worst[:, s] += n - int(same.sum())
    return best, worst


def rank_ranges(
    mu_runs: np.ndarray, confidence: float = 0.95, components: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each system's ranks over R runs, sorted, with ceil((R - 0.95 R) / 2) dropped from
    each end: (best, worst) of what is left, the 95% rank range. A run's rank is a span
    where the evidence leaves it one (rank_bounds_per_run): the best ends of the spans
    give the range's best rank, the worst ends its worst."""
    best, worst = rank_bounds_per_run(mu_runs, components)
    drop = trimmed_per_end(best.shape[0], confidence)
    return np.sort(best, axis=0)[drop], np.sort(worst, axis=0)[best.shape[0] - 1 - drop]


def clusters(mean_mu: np.ndarray, rank_lo: np.ndarray, rank_hi: np.ndarray) -> np.ndarray:
    """Cluster number per system (1 = best).

    Systems are ordered by mean mu (stable: ties keep index order); a cluster ends below a
    system whose worst rank is better (smaller) than the best rank of every system below it.
    """
    order = np.argsort(-np.asarray(mean_mu), kind="stable")
    lo, hi = np.asarray(rank_lo)[order], np.asarray(rank_hi)[order]
    best_below = np.minimum.accumulate(lo[::-1])[::-1][1:]  # min of lo over positions > i
    ends = hi[:-1] < best_below
    in_order = 1 + np.concatenate(([0], np.cumsum(ends)))
    cluster = np.empty(len(order), dtype=np.int64)
    cluster[order] = in_order
    return cluster


def summarise(
    result: RunsResult, confidence: float = 0.95, components: np.ndarray | None = None
) -> Ranking:
    """Mean mu, rank ranges and clusters of R runs; ``components``: as for rank_ranges
    (None: one connected comparison graph)."""
    mean_mu = result.mu.mean(axis=0)
    rank_lo, rank_hi = rank_ranges(result.mu, confidence, components)
    cluster = clusters(mean_mu, rank_lo, rank_hi)
    return _ranking(result, rank_lo.astype(np.int64), rank_hi.astype(np.int64), cluster)


def summarise_claims(result: RunsResult, comparisons: Comparisons, n_systems: int) -> Ranking:
    """Mean mu, and rank sets and clusters from the claims that hold for the whole table
    (joint.resampled_claims: Holm over every two systems' difference, studentized by its
    spread over the runs), for runs that each resample whole units: the unit bootstrap."""
    mean_mu = result.mu.mean(axis=0)
    compared = result.n_comparisons > 0
    components = comparisons.components(n_systems)
    comparable = (components[:, None] == components[None, :]) & compared[:, None] & compared
    cells = UnitPairs.of(with_units(comparisons))
    everyone = np.ones(n_systems, dtype=bool)  # one never compared could be anywhere
    pairs = resampled_claims(
        mean_mu, result.mu, everyone, comparable, cells.n_units, cells.units_per_pair(n_systems)
    )
    claims = pairs.claims
    return _ranking(result, claims.rank_lo, claims.rank_hi, claims.cluster, pairs)


def _ranking(
    result: RunsResult,
    rank_lo: np.ndarray,
    rank_hi: np.ndarray,
    cluster: np.ndarray,
    pairs: PairStatistics | None = None,
) -> Ranking:
    """The runs' means and spreads with the ranks and clusters a summary found."""
    mean_mu = result.mu.mean(axis=0)
    return Ranking(
        protocol=result.protocol,
        params=result.params,
        runs=result.runs,
        seed=result.seed,
        mean_mu=mean_mu,
        mean_sigma=result.sigma.mean(axis=0),
        std_mu=result.mu.std(axis=0),
        rank_lo=rank_lo,
        rank_hi=rank_hi,
        cluster=cluster,
        n_comparisons=result.n_comparisons,
        order=np.argsort(-mean_mu, kind="stable"),
        pairs=pairs,
    )
