"""The platform's calibrated verdict: which systems are better than which, claimed only where
the claim holds for the whole table at 95%, on every design the platform serves.

- What it compares: within each item (every page of one input), every two judgments'
  difference, each judgment a normal score of its place among its annotator's own scores
  (the scale is each annotator's own: a RankME score of 111,111 is just that annotator's
  best); the choices of pairwise and best-worst pages, +1, 0 (a tie) or -1 for each two
  systems of a page.
- Strengths by least squares on the comparison graph (Massey 1997; HodgeRank, Jiang et al.
  2011): theta minimises the sum over comparisons of (o - (theta_a - theta_b))^2, that is
  L theta = r with L the graph's Laplacian (comparisons per pair) and r each system's wins
  minus losses (for scores: the sums of differences); mean zero. On a balanced design theta
  is proportional to a system's mean net share of its item-mates beaten; where the design
  is not balanced it allows for the opponents each system met.
- The independent unit is the item: every page of an input shares its outputs (E2E judges
  each output three times, on pages that overlap), so the spread of theta is the
  cluster-robust (sandwich) covariance over items, with the small-sample factor U / (U - 1).
- Joint claims (ranking/engine/joint.py): cuts in the order, each saying that every system
  above it is better than every system below, claimed step-down where the smallest
  studentized difference across the cut is beyond what the same statistic reaches with the
  system labels permuted among each item's judged outputs. When no system differs, that
  permutation leaves the campaign's distribution unchanged, so the table claims an order in
  at most 5% of campaigns, whatever the design; studentizing each permutation keeps the
  rest of the table at its level once a truly better system has been told apart.

Pure numpy and numba; the item of each comparison comes with the comparisons
(Comparisons.unit).
"""

import math
from dataclasses import dataclass

import numba
import numpy as np

from .joint import JointClaims, PairStatistics, joint_claims, pair_indices
from .progress import Progress
from .rng import next_index, run_seeds
from .units import UnitPairs, present_systems

# A pair whose difference varies less than this (relative to theta's scale) has no spread to
# studentize by: its t is 0, whatever its difference (nothing in the data could move it).
_TINY_VARIANCE = 1e-18
_TINY_DIFFERENCE = 1e-9
# Tiny virtual comparisons between every two systems, so that a permuted graph that falls
# into pieces still has one solution (its cross-piece differences are then near zero).
_RIDGE = 1e-9
_CHUNK = 64  # permutations per progress report


@dataclass(frozen=True)
class CalibratedRanking:
    """Per-system results, indexed by system number. Systems that took part in no comparison
    get NaN and no place in ``order``."""

    protocol: str
    strength: np.ndarray  # float64[n]: theta (net share of wins, opponents allowed for)
    std: np.ndarray  # float64[n]: theta's standard error over items
    ci_lo: np.ndarray  # float64[n]: comparison interval (joint.py): apart only where claimed
    ci_hi: np.ndarray  # float64[n]
    pairs: PairStatistics
    n_comparisons: np.ndarray  # int64[n]: judgments (or comparisons) of each system
    n_units: int
    permutations: int
    seed: int | None
    order: np.ndarray  # int64[ranked], best first by strength

    @property
    def claims(self) -> JointClaims:
        return self.pairs.claims

    @property
    def cluster(self) -> np.ndarray:
        return self.claims.cluster

    @property
    def rank_lo(self) -> np.ndarray:
        return self.claims.rank_lo

    @property
    def rank_hi(self) -> np.ndarray:
        return self.claims.rank_hi


def calibrated_verdict(
    pairs: UnitPairs,
    n_systems: int,
    judged: np.ndarray,
    permutations: int,
    seed: int | np.random.Generator,
    progress: Progress | None = None,
    confidence: float = 0.95,
) -> CalibratedRanking:
    """The verdict of the cells `pairs` (from page comparisons or from blocks of scores:
    units.UnitPairs) between `n_systems` systems, its claims tested against `permutations`
    relabellings within units; `judged`: int[n], each system's judgments (or comparisons)."""
    if permutations < 1:
        raise ValueError("permutations must be at least 1")
    strength, covariance = strengths_and_covariance(pairs, n_systems)
    in_cells = np.zeros(n_systems, dtype=bool)
    in_cells[pairs.first[pairs.count > 0]] = True
    in_cells[pairs.second[pairs.count > 0]] = True
    components = pairs.components(n_systems)
    t = studentized(strength, covariance, comparable(components, in_cells))
    null_t, null_strength = permuted_draws(pairs, n_systems, permutations, seed, progress)
    claims = joint_claims(strength, t, null_t, null_strength, in_cells, components, 1 - confidence)
    std = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    single_piece = len(np.unique(components[in_cells])) <= 1
    ci_lo, ci_hi = claims.comparison_interval(strength, covariance)
    if not single_piece:
        ci_lo, ci_hi = np.full(n_systems, np.nan), np.full(n_systems, np.nan)
    ranked = np.flatnonzero(in_cells)
    return CalibratedRanking(
        protocol="calibrated",
        strength=np.where(in_cells, strength, np.nan),
        std=np.where(in_cells, std, np.nan),
        ci_lo=np.where(in_cells, ci_lo, np.nan),
        ci_hi=np.where(in_cells, ci_hi, np.nan),
        pairs=PairStatistics(*differences(strength, covariance), t, claims),
        n_comparisons=np.asarray(judged, dtype=np.int64),
        n_units=pairs.n_units,
        permutations=permutations,
        seed=int(seed) if isinstance(seed, int | np.integer) else None,
        order=ranked[np.argsort(-strength[ranked], kind="stable")],
    )


def comparable(components: np.ndarray, compared: np.ndarray) -> np.ndarray:
    """bool[n, n]: two compared systems of one piece of the comparison graph (only there
    does the data say anything of their order)."""
    same = components[:, None] == components[None, :]
    return same & compared[:, None] & compared[None, :]


def differences(strength: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's difference and its standard error (pair_indices order)."""
    first, second = pair_indices(len(strength))
    variance = covariance[first, first] + covariance[second, second] - 2 * covariance[first, second]
    return strength[first] - strength[second], np.sqrt(np.maximum(variance, 0.0))


def studentized(strength: np.ndarray, covariance: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """float64[P]: (theta_a - theta_b) / se for each pair a < b (pair_indices order); 0 where
    the pair is not comparable or its difference has no spread."""
    first, second = pair_indices(len(strength))
    variance = covariance[first, first] + covariance[second, second] - 2 * covariance[first, second]
    scale = max(1.0, float(np.abs(strength).max(initial=0.0)))
    spread = variance > _TINY_VARIANCE * scale * scale
    difference = strength[first] - strength[second]
    # A difference the data fix exactly (every comparison of the pair won, and nothing else
    # they did varies) has no spread: infinitely sure, unless the permutations are as sure
    # (then nothing is claimed: joint.cut_step_down counts ties with the maximum as exceedances).
    exact = ~spread & (np.abs(difference) > _TINY_DIFFERENCE * scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(spread, difference / np.sqrt(np.where(spread, variance, 1.0)), 0.0)
    t = np.where(exact, np.copysign(np.inf, difference), t)
    return np.where(mask[first, second], t, 0.0)


def strengths_and_covariance(pairs: UnitPairs, n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """theta (mean zero) and its covariance over units."""
    strength = np.empty(n_systems)
    covariance = np.empty((n_systems, n_systems))
    _fit(
        pairs.first,
        pairs.second,
        pairs.count,
        pairs.net,
        pairs.unit_starts(),
        strength,
        covariance,
        np.empty((n_systems, n_systems)),
    )
    return strength, covariance


def permuted_draws(
    pairs: UnitPairs,
    n_systems: int,
    permutations: int,
    seed: int | np.random.Generator,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(float64[B, P], float64[B, n]): the studentized differences and the strengths of
    `permutations` relabellings, each
    permuting the systems judged in a unit among themselves (one permutation per unit,
    applied to all its pages), every pair counted as comparable (a pair a permutation
    leaves unconnected has near-zero difference and t: it never inflates the maximum by
    much, and if it does the test is only more cautious)."""
    starts = pairs.unit_starts()
    present, present_starts, slot_first, slot_second = present_systems(pairs, starts)
    seeds = run_seeds(seed, permutations)
    out = np.empty((permutations, n_systems * (n_systems - 1) // 2))
    strengths = np.empty((permutations, n_systems))
    for begin in range(0, permutations, _CHUNK):
        stop = min(begin + _CHUNK, permutations)
        _permuted_runs(
            seeds[begin:stop],
            pairs.count,
            pairs.net,
            starts,
            present,
            present_starts,
            slot_first,
            slot_second,
            n_systems,
            out[begin:stop],
            strengths[begin:stop],
        )
        if progress is not None:
            progress(stop, permutations)
    return out, strengths


@numba.njit(cache=True)
def _fit(
    first: np.ndarray,
    second: np.ndarray,
    count: np.ndarray,
    net: np.ndarray,
    starts: np.ndarray,
    strength: np.ndarray,
    covariance: np.ndarray,
    scratch: np.ndarray,
) -> None:
    """theta and its sandwich covariance into `strength` and `covariance`; `scratch` is
    float64[n, n] (the Laplacian, then the meat)."""
    n = strength.shape[0]
    laplacian = scratch
    laplacian[:, :] = 1.0 / n + _RIDGE  # the gauge (mean zero), and the ridge's off-diagonal
    wins = np.zeros(n)
    for row in range(first.shape[0]):
        a, b, c = first[row], second[row], count[row]
        laplacian[a, b] -= c
        laplacian[b, a] -= c
        laplacian[a, a] += c
        laplacian[b, b] += c
        wins[a] += net[row]
        wins[b] -= net[row]
    for a in range(n):
        laplacian[a, a] += n * _RIDGE
    inverse = np.linalg.inv(laplacian)
    strength[:] = inverse @ wins
    meat = _meat(first, second, count, net, starts, strength, laplacian)
    covariance[:, :] = inverse @ meat @ inverse


@numba.njit(cache=True)
def _meat(
    first: np.ndarray,
    second: np.ndarray,
    count: np.ndarray,
    net: np.ndarray,
    starts: np.ndarray,
    strength: np.ndarray,
    meat: np.ndarray,
) -> np.ndarray:
    """Sum over units of psi_u psi_u^T, psi_u the unit's residual wins r_u - L_u theta, times
    U / (U - 1); written into (and returned as) `meat`."""
    n = strength.shape[0]
    meat[:, :] = 0.0
    psi = np.zeros(n)
    seen = np.zeros(n, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)  # the unit's systems, so a unit costs its own size
    units = starts.shape[0] - 1
    for u in range(units):
        m = 0
        for row in range(starts[u], starts[u + 1]):
            a, b = first[row], second[row]
            residual = net[row] - count[row] * (strength[a] - strength[b])
            for s in (a, b):
                if not seen[s]:
                    seen[s] = True
                    touched[m] = s
                    m += 1
            psi[a] += residual
            psi[b] -= residual
        for i in range(m):
            for j in range(m):
                meat[touched[i], touched[j]] += psi[touched[i]] * psi[touched[j]]
        for i in range(m):
            psi[touched[i]] = 0.0
            seen[touched[i]] = False
    if units > 1:
        meat *= units / (units - 1.0)
    return meat


@numba.njit(cache=True)
def _permute_units(
    state: np.uint64, present: np.ndarray, present_starts: np.ndarray, relabel: np.ndarray
) -> np.uint64:
    """relabel[i] = the system present[i] becomes: a uniform permutation within each unit
    (Fisher-Yates, backwards)."""
    relabel[:] = present
    for u in range(present_starts.shape[0] - 1):
        lo = present_starts[u]
        for i in range(present_starts[u + 1] - 1, lo, -1):
            state, j = next_index(state, i - lo + 1)
            j += lo
            relabel[i], relabel[j] = relabel[j], relabel[i]
    return state


@numba.njit(cache=True, parallel=True)
def _permuted_runs(
    seeds: np.ndarray,
    count: np.ndarray,
    net: np.ndarray,
    starts: np.ndarray,
    present: np.ndarray,
    present_starts: np.ndarray,
    slot_first: np.ndarray,
    slot_second: np.ndarray,
    n: int,
    out: np.ndarray,
    out_strength: np.ndarray,
) -> None:
    rows = count.shape[0]
    for b in numba.prange(seeds.shape[0]):
        relabel = np.empty(present.shape[0], dtype=np.int64)
        _permute_units(seeds[b], present, present_starts, relabel)
        first = np.empty(rows, dtype=np.int64)
        second = np.empty(rows, dtype=np.int64)
        signed = np.empty(rows)
        for u in range(starts.shape[0] - 1):
            base = present_starts[u]
            for row in range(starts[u], starts[u + 1]):
                a = relabel[base + slot_first[row]]
                c = relabel[base + slot_second[row]]
                if a < c:
                    first[row], second[row], signed[row] = a, c, net[row]
                else:
                    first[row], second[row], signed[row] = c, a, -net[row]
        strength = out_strength[b]
        covariance = np.empty((n, n))
        _fit(first, second, count, signed, starts, strength, covariance, np.empty((n, n)))
        _studentized_into(strength, covariance, out[b])


@numba.njit(cache=True)
def _studentized_into(strength: np.ndarray, covariance: np.ndarray, out: np.ndarray) -> None:
    n = strength.shape[0]
    scale = 1.0
    for a in range(n):
        scale = max(scale, abs(strength[a]))
    k = 0
    for a in range(n):
        for b in range(a + 1, n):
            variance = covariance[a, a] + covariance[b, b] - 2 * covariance[a, b]
            difference = strength[a] - strength[b]
            if variance > _TINY_VARIANCE * scale * scale:
                out[k] = difference / math.sqrt(variance)
            elif abs(difference) > _TINY_DIFFERENCE * scale:
                out[k] = math.copysign(math.inf, difference)
            else:
                out[k] = 0.0
            k += 1


def normal_scores(annotator: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Each score as a normal score of its place among its annotator's scores:
    Phi^-1((mid-rank - 1/2) / n). The scale then is each annotator's own, whatever they
    typed: a RankME magnitude of 111,111 is just that annotator's best, a severe and a
    lenient slider compare fairly, and a difference of places counts as much as the
    annotator's scores spread there."""
    from scipy.stats import norm  # noqa: PLC0415 - scipy loads slowly

    annotator = np.asarray(annotator)
    score = np.asarray(score, dtype=np.float64)
    order = np.lexsort((score, annotator))
    place = np.empty(len(score))
    sorted_annotator, sorted_score = annotator[order], score[order]
    starts = np.flatnonzero(np.r_[True, sorted_annotator[1:] != sorted_annotator[:-1]])
    ends = np.r_[starts[1:], len(score)]
    for start, end in zip(starts, ends, strict=True):
        values = sorted_score[start:end]
        below = np.searchsorted(values, values, side="left")
        upto = np.searchsorted(values, values, side="right")
        place[order[start:end]] = ((below + upto) / 2) / (end - start)  # (mid-rank - 1/2) / n
    return norm.ppf(place)
