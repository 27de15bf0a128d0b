"""Claims that hold for the whole table at once: which system is better than which, the rank
sets and the clusters that follow, from studentized pairwise differences and their
distribution where nothing differs (permutations or resamples of the design's units).

The calibrated verdict claims two kinds of order, sharing the level so that the whole
table's chance of any false claim is at most alpha (a union bound): CUTS_SHARE to cuts, the
rest to pairs.

- **Cuts.** A cut between two neighbours in the order says that every system above it is
  better than every system below. A group's cut statistic is the largest, over the places
  in its order, of the smallest t across that place (every system above against every
  system below); where nothing differs its upper point is small (about 1.6 standard errors
  for six systems at 2.5%, against 3.1 for the largest of 15 pairwise |t|), because a wide
  gap with every pair across it wide is rare among equals. That is the shape of WMT's
  clusters (a system above a boundary beats every system below it), made to hold its level
  by step-down over partitions, as closed testing does (Marcus, Peritz and Gabriel 1976):
  every ranked system starts in one group (one per piece of the comparison graph), in the
  order of the estimates; at each step every group's cut statistic gets its p-value among
  the same statistic in each permutation (the group ordered by that permutation's
  estimates), the smallest p-value over the groups is compared with the smallest in each
  permutation (min-p: a group of two and one of nineteen weigh alike), and where it is
  beyond, that group is split at that cut and the step repeats. Every pair across a cut
  must also be beyond what one pair's |t| reaches among equals at the cuts' level shared
  among the disjoint pairs the groups still hold (intersection-union, as closed testing
  asks): the group test says that a group is not all equal, not that its largest cut is
  the true one, and a cut is false wherever two equal systems fall on either side of it.
  Of h disjoint pairs of equal systems, each beside a true gap, any one could be split by
  its luckier member's cut: h = the sum over the groups of half their size (rounded down),
  smaller at each step as the cuts leave smaller groups. A better system ahead of equal
  ones is found this way.
- **Pairs.** Step-down by the largest |t| (Westfall and Young 1993; Romano and Wolf 2005):
  the pairs in decreasing |t|; the k-th is claimed, in the direction of its difference,
  while its |t| is beyond the upper point of the largest |t*| over the pairs not yet
  claimed; the first pair not claimed ends the claims. Systems far apart in a long gradual
  order (E2E's 21) are told apart this way, where no gap is wide.

Each p-value is counted as (1 + exceedances) / (B + 1), so that B draws never claim too much.
Measured in benchmarks/calibration.py on null, one-better and three-tier campaigns, and in
research/cut_levels.py on the partial nulls hardest for cuts (docs/calibration.md).

What a reader may read follows from the claims and from nothing else:
- rank sets (Mogstad, Romano, Shaikh and Wilhelm 2024): a system's best rank is 1 + the
  systems claimed better, its worst the ranked systems less those claimed worse;
- clusters: the groups (a boundary falls where every system above is claimed better than
  every system below);
- comparison intervals: half-widths (c / 2) max_b se_ab, c the first cut's critical value,
  widened where needed so that two systems not claimed apart always overlap: intervals
  apart are a claimed pair.

Views whose spread comes from resampling (resampled_claims) test each pair with Holm's
step-down instead.
"""

from dataclasses import dataclass

import numba
import numpy as np

# How the level is shared (measured in docs/calibration.md): cuts get 60% of it and pairs
# the rest. Each pair across a claimed cut is held to the cuts' share divided among the
# disjoint pairs of equal systems the groups could still hold: with one pair's level fixed
# (half the cuts' share), equal systems two to three standard errors apart from the next
# tier were split in 7.3% of campaigns with five such tiers of two and 11.3% with ten
# (research/cut_levels.py, a normal model); divided, at most 3.3% in every case measured.
CUTS_SHARE = 0.6


def pair_indices(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs a < b of n systems in the order every array of pairs here uses."""
    return np.triu_indices(n, k=1)


@dataclass(frozen=True)
class JointClaims:
    """What the table claims; arrays indexed by system number. Systems without a place
    (``ranked`` False) have cluster 0 and rank 0."""

    better: np.ndarray  # bool[n, n]: better[a, b] where a is claimed better than b
    ranked: np.ndarray  # bool[n]
    rank_lo: np.ndarray  # int64[n]
    rank_hi: np.ndarray  # int64[n]
    cluster: np.ndarray  # int64[n], 1 = best
    critical: float  # the first step's critical |t| (inf: too few draws to claim anything)
    alpha: float

    @property
    def claimed_pairs(self) -> int:
        return int(self.better.sum())

    def comparison_interval(
        self, estimate: np.ndarray, covariance: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) per system: apart only for claimed pairs. NaN where there is no place or
        no critical value, and for every system where the graph has more than one piece
        (intervals across pieces would show an order that nothing measured)."""
        n = len(estimate)
        if not np.isfinite(self.critical):  # too few draws to claim anything: no intervals
            return np.full(n, np.nan), np.full(n, np.nan)
        variance = np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance
        se = np.sqrt(np.maximum(variance, 0.0))
        usable = self.ranked[:, None] & self.ranked[None, :] & ~np.eye(n, dtype=bool)
        widest = np.where(usable, se, 0.0).max(axis=1, initial=0.0)
        half = 0.5 * self.critical * widest
        # Two systems not claimed apart overlap, however far apart their estimates.
        unclaimed = usable & ~self.better & ~self.better.T
        distance = np.abs(estimate[:, None] - estimate[None, :])
        reach = 0.5 * (1 + 1e-9) * np.where(unclaimed, distance, 0.0).max(axis=1, initial=0.0)
        half = np.maximum(half, reach)  # 1e-9: not apart by a rounding
        missing = ~self.ranked | ~np.isfinite(half)
        return np.where(missing, np.nan, estimate - half), np.where(
            missing, np.nan, estimate + half
        )


@dataclass(frozen=True)
class PairStatistics:
    """Every two systems a < b, in pair_indices order: the difference of their estimates,
    its standard error, their t (0 where the data cannot order them) and the claims."""

    difference: np.ndarray  # float64[P]
    se: np.ndarray  # float64[P]
    t: np.ndarray  # float64[P]
    claims: JointClaims

    def rows(self, systems: list) -> list[list]:
        """[a, b, difference, se, t, claimed] per pair of ranked systems, systems by their
        keys in `systems`; claimed 1 where a is claimed above b, -1 below, 0 neither."""
        ranked = self.claims.ranked
        first, second = pair_indices(len(ranked))
        better = self.claims.better
        return [
            [
                systems[a],
                systems[b],
                float(self.difference[k]),
                float(self.se[k]),
                finite_or_none(float(self.t[k])),
                int(better[a, b]) - int(better[b, a]),
            ]
            for k, (a, b) in enumerate(zip(first.tolist(), second.tolist(), strict=True))
            if ranked[a] and ranked[b]
        ]


def finite_or_none(value: float) -> float | None:
    """A number JSON can carry: an infinite t (a difference the data fix exactly) as None."""
    return value if np.isfinite(value) else None


def joint_claims(
    estimate: np.ndarray,
    t: np.ndarray,
    null_t: np.ndarray,
    null_estimate: np.ndarray,
    ranked: np.ndarray,
    pieces: np.ndarray,
    alpha: float = 0.05,
) -> JointClaims:
    """Claims from the pairs' studentized differences `t` (float64[P], pair_indices order,
    0 for a pair the data cannot order) and B draws where nothing differs: their `null_t`
    (float64[B, P]) and `null_estimate` (float64[B, n]), by cuts (the module's docstring).
    `pieces`: int[n], the piece of the comparison graph of each system; each piece is a
    group from the start, and nothing is claimed across pieces."""
    n = len(estimate)
    ranked = np.asarray(ranked, dtype=bool)
    places = np.flatnonzero(ranked)
    order = places[np.argsort(-estimate[places], kind="stable")]
    groups = [order[pieces[order] == piece] for piece in np.unique(pieces[order])]
    null_matrix = np.ascontiguousarray(signed_matrices(null_t, n))
    null_estimate = np.ascontiguousarray(null_estimate, dtype=np.float64)
    matrix = signed_matrices(t[None, :], n)[0]
    # The level shared between the two kinds of claim: together at most alpha (a union bound).
    cuts_alpha = CUTS_SHARE * alpha
    # Every pair across a claimed cut must also be beyond what one pair's |t| reaches among
    # equals (intersection-union): else, of two equal systems ahead of the rest, the
    # luckier one could be cut off alone, its cut chosen over the true one and tested only
    # against a group of equals.
    pooled = np.sort(np.abs(null_t).reshape(-1))[::-1]
    better, critical = cut_step_down(groups, matrix, null_matrix, null_estimate, cuts_alpha, pooled)
    mark_claimed_pairs(better, pair_step_down(t, null_t, alpha - cuts_alpha), t)
    better &= ranked[:, None] & ranked[None, :]
    rank_lo, rank_hi = rank_sets(better, ranked)
    return JointClaims(
        better=better,
        ranked=ranked,
        rank_lo=rank_lo,
        rank_hi=rank_hi,
        cluster=clusters_of_claims(better, estimate, ranked),
        critical=critical,
        alpha=alpha,
    )


def mark_claimed_pairs(better: np.ndarray, claimed: np.ndarray, t: np.ndarray) -> None:
    """better[a, b] = True for each claimed pair (bool[P], pair_indices order), in the
    direction of its t."""
    first, second = pair_indices(better.shape[0])
    up, down = claimed & (t > 0), claimed & (t < 0)
    better[first[up], second[up]] = True
    better[second[down], first[down]] = True


def signed_matrices(t: np.ndarray, n: int) -> np.ndarray:
    """float64[B, n, n] from pair vectors float64[B, P]: [a, b] = t of a over b."""
    first, second = pair_indices(n)
    out = np.zeros((t.shape[0], n, n))
    out[:, first, second] = t
    out[:, second, first] = -t
    return out


def cut_step_down(
    groups: list[np.ndarray],
    matrix: np.ndarray,
    null_matrix: np.ndarray,
    null_estimate: np.ndarray,
    alpha: float,
    pooled_null: np.ndarray,
) -> tuple[np.ndarray, float]:
    """better[a, b] (bool[n, n]) for every two systems a cut of one of `groups` (each in the
    order of the estimates) put apart, each pair across a cut beyond pairs_across_critical,
    and the smallest |t| a pair across a cut needs: the larger of the first step's critical
    cut statistic (for the largest group) and pairs-across critical; inf where the draws
    are too few to claim anything. `pooled_null`: every draw's |t| of every pair, largest
    first.

    Each step tests the groups jointly by the smallest of their p-values (Westfall and Young
    1993's min-p): a group of two and a group of nineteen have cut statistics of very
    different spread where nothing differs, and the largest statistic would be the small
    group's. The observed groups are ranked among the draws alike, so the test is exact
    where the groups' systems are all equal."""
    n = matrix.shape[0]
    better = np.zeros((n, n), dtype=bool)
    groups = list(groups)
    critical = float("inf")
    first_step = True
    while True:
        testable = [g for g, group in enumerate(groups) if len(group) >= 2]
        if not testable:
            break
        observed = [cut_statistic(groups[g], matrix) for g in testable]
        members = np.concatenate([groups[g] for g in testable])
        starts = np.cumsum([0] + [len(groups[g]) for g in testable])
        null = _null_group_statistics(members, starts, null_matrix, null_estimate)
        pair_critical = pairs_across_critical(pooled_null, groups, alpha)
        if first_step:
            biggest = int(np.argmax(np.diff(starts)))
            critical = max(exceeded_beyond(null[:, biggest], alpha), pair_critical)
            first_step = False
        values = np.vstack([[statistic for statistic, _ in observed], null])
        shares = tail_shares(values)
        least = shares.min(axis=1)
        # The group split is the most significant one whose cut holds pair by pair too.
        splittable = [k for k in range(len(testable)) if observed[k][0] >= pair_critical]
        if not splittable:
            break
        chosen = min(splittable, key=lambda k: shares[0, k])
        statistic, place = observed[chosen]
        if statistic <= 0 or place == 0:
            break
        if np.count_nonzero(least <= shares[0, chosen]) / len(least) > alpha:
            break
        g = testable[chosen]
        group = groups[g]
        better[np.ix_(group[:place], group[place:])] = True
        groups[g : g + 1] = [group[:place], group[place:]]
    return better, critical


def pairs_across_critical(pooled_null: np.ndarray, groups: list[np.ndarray], alpha: float) -> float:
    """The |t| each pair across a cut must pass: one pair's |t| among equals (`pooled_null`,
    largest first) at `alpha` shared among the disjoint pairs the groups hold (the module's
    docstring)."""
    disjoint_pairs = max(1, sum(len(group) // 2 for group in groups))
    return exceeded_beyond_sorted(pooled_null, alpha / disjoint_pairs)


def tail_shares(values: np.ndarray) -> np.ndarray:
    """float64[R, G]: for each value, the share of its column's values at least as large
    (a p-value among the R rows: the observed one and the draws)."""
    rows = values.shape[0]
    ordered = np.sort(values, axis=0)
    shares = np.empty_like(values, dtype=np.float64)
    for column in range(values.shape[1]):
        below = np.searchsorted(ordered[:, column], values[:, column], side="left")
        shares[:, column] = (rows - below) / rows
    return shares


def cut_statistic(group: np.ndarray, matrix: np.ndarray) -> tuple[float, int]:
    """(the group's cut statistic, the place of its cut: the number of systems above it);
    (0, 0) for a group of one."""
    return _cut_statistic(np.ascontiguousarray(group, dtype=np.int64), matrix)


@numba.njit(cache=True)
def _cut_statistic(group: np.ndarray, matrix: np.ndarray) -> tuple[float, int]:
    m = group.shape[0]
    best, place = 0.0, 0
    smallest_from_above = np.full(m, np.inf)  # for each system below: min t from above it
    for k in range(1, m):
        above = group[k - 1]
        across = np.inf
        for j in range(k, m):
            value = matrix[above, group[j]]
            if value < smallest_from_above[j]:
                smallest_from_above[j] = value
            if smallest_from_above[j] < across:
                across = smallest_from_above[j]
        if across > best or place == 0:
            best, place = across, k
    return best, place


@numba.njit(cache=True, parallel=True)
def _null_group_statistics(
    members: np.ndarray, starts: np.ndarray, null_matrix: np.ndarray, null_estimate: np.ndarray
) -> np.ndarray:
    """float64[B, G]: per draw, the cut statistic of each group (members[starts[g]:
    starts[g + 1]]), the group ordered by that draw's estimates."""
    draws = null_matrix.shape[0]
    out = np.zeros((draws, starts.shape[0] - 1))
    for b in numba.prange(draws):
        for g in range(starts.shape[0] - 1):
            group = members[starts[g] : starts[g + 1]]
            ordered = group[np.argsort(-null_estimate[b, group], kind="mergesort")]
            out[b, g], _ = _cut_statistic(ordered, null_matrix[b])
    return out


def exceeded_beyond(maxima: np.ndarray, alpha: float) -> float:
    """The smallest statistic claimed beyond: above the (K+1)-th largest of the draws'
    maxima it has at most K exceedances, K = floor(alpha (B + 1)) - 1."""
    return exceeded_beyond_sorted(np.sort(maxima)[::-1], alpha)


def exceeded_beyond_sorted(ordered: np.ndarray, alpha: float) -> float:
    """exceeded_beyond of draws already sorted, largest first."""
    if len(ordered) == 0:
        return float("inf")
    allowed = int(np.floor(alpha * (len(ordered) + 1) + 1e-9)) - 1
    if allowed < 0:
        return float("inf")
    return float(ordered[allowed]) if allowed < len(ordered) else 0.0


def pair_step_down(t: np.ndarray, null_t: np.ndarray, alpha: float) -> np.ndarray:
    """bool[P]: the pairs claimed by step-down max-T (the module's docstring)."""
    size = np.abs(t)
    order = np.argsort(-size, kind="stable")
    draws = np.abs(null_t)[:, order]
    # Largest |t*| over the pairs from step k on: a suffix maximum over the sorted pairs.
    remaining_max = np.maximum.accumulate(draws[:, ::-1], axis=1)[:, ::-1]
    rejected = np.zeros(len(t), dtype=bool)
    b = draws.shape[0]
    for k, pair in enumerate(order):
        if size[pair] == 0:
            break
        p_value = (1 + np.count_nonzero(remaining_max[:, k] >= size[pair])) / (b + 1)
        if p_value > alpha:
            break
        rejected[pair] = True
    return rejected


def rank_sets(better: np.ndarray, ranked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst rank of each ranked system among the ranked ones: all ranks held at
    once wherever every claim is true."""
    places = int(ranked.sum())
    rank_lo = np.where(ranked, 1 + better.sum(axis=0), 0)
    rank_hi = np.where(ranked, places - better.sum(axis=1), 0)
    return rank_lo.astype(np.int64), rank_hi.astype(np.int64)


def clusters_of_claims(better: np.ndarray, estimate: np.ndarray, ranked: np.ndarray) -> np.ndarray:
    """Cluster per system (1 = best, 0 without a place): the ranked systems by estimate; a
    boundary below position i where every system at or above i is claimed better than
    every system below."""
    places = np.flatnonzero(ranked)
    order = places[np.argsort(-estimate[places], kind="stable")]
    inside = better[np.ix_(order, order)]
    ends = [bool(inside[: i + 1, i + 1 :].all()) for i in range(len(order) - 1)]
    cluster = np.zeros(len(estimate), dtype=np.int64)
    cluster[order] = 1 + np.concatenate(([0], np.cumsum(ends, dtype=np.int64)))[: len(order)]
    return cluster


def resampled_claims(
    estimate: np.ndarray,
    replicates: np.ndarray,
    ranked: np.ndarray,
    comparable: np.ndarray,
    units: int,
    units_per_pair: np.ndarray,
    alpha: float = 0.05,
) -> PairStatistics:
    """Claims of a view whose spread comes from resampling whole units (`replicates`,
    float64[R, n], one row per resample): each difference studentized by its spread over
    the resamples, Student's t with U - 1 degrees of freedom (U units), and Holm's step-down
    over the comparable pairs (Holm 1979), which holds for the whole table whatever the
    pairs' dependence.

    A difference with no spread at all (every unit that compares the pair says the same,
    so every resample does) is judged by those units alone: with u of them all one way, a
    sign test's p = 2^(1 - u) (30 comparisons all won: a claim; 3: none).
    `units_per_pair`: int[P], the units in which each pair was compared.

    A resampling view cannot do what the calibrated view does (its statistic is too costly
    to recompute under hundreds of permutations), and the far tail of a bootstrap's maximum
    over many pairs is where a few hundred resamples say least: Holm needs only each pair's
    own spread."""
    from scipy.stats import t as student  # noqa: PLC0415 - scipy loads slowly

    n = len(estimate)
    first, second = pair_indices(n)
    difference = replicates[:, first] - replicates[:, second]
    spread = difference.std(axis=0, ddof=1) if len(replicates) > 1 else np.zeros(len(first))
    gap = estimate[first] - estimate[second]
    scale = max(1.0, float(np.abs(estimate).max(initial=0.0)))
    varied = spread > 1e-12 * scale
    fixed = ~varied & (np.abs(gap) > 1e-9 * scale)  # the same in every resample
    usable = comparable[first, second] & (varied | fixed)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(varied, gap / np.where(varied, spread, 1.0), np.copysign(np.inf, gap))
    t = np.where(usable, t, 0.0)
    degrees = max(units - 1, 1)
    p_value = np.where(
        varied,
        2 * student.sf(np.abs(np.where(varied, t, 0.0)), degrees),
        np.minimum(1.0, 2.0 ** (1.0 - np.asarray(units_per_pair, dtype=np.float64))),
    )
    rejected = np.zeros(len(t), dtype=bool)
    rejected[usable] = holm(p_value[usable], alpha)
    tested = max(int(usable.sum()), 1)
    critical = float(student.isf(alpha / (2 * tested), degrees))
    better = np.zeros((n, n), dtype=bool)
    mark_claimed_pairs(better, rejected, t)
    ranked = np.asarray(ranked, dtype=bool)
    better &= ranked[:, None] & ranked[None, :]
    rank_lo, rank_hi = rank_sets(better, ranked)
    claims = JointClaims(
        better=better,
        ranked=ranked,
        rank_lo=rank_lo,
        rank_hi=rank_hi,
        cluster=clusters_of_claims(better, estimate, ranked),
        critical=critical,
        alpha=alpha,
    )
    return PairStatistics(gap, spread, t, claims)


def holm(p_value: np.ndarray, alpha: float) -> np.ndarray:
    """bool: Holm's step-down rejections at familywise level alpha."""
    order = np.argsort(p_value, kind="stable")
    m = len(p_value)
    rejected = np.zeros(m, dtype=bool)
    for k, index in enumerate(order):
        if p_value[index] > alpha / (m - k):
            break
        rejected[index] = True
    return rejected
