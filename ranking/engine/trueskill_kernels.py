"""TrueSkill's runs as compiled kernels: one run of the E2E protocol or of the unit bootstrap,
and their parallel loops over runs. Plain numbers and arrays only, so that the CPU's threads
(trueskill_runs.py) and the GPU's (trueskill_cuda.py) run these same functions.

The kernels here inline those of trueskill.py and rng.py; numba_cache.py clears the disk
cache when any of them changes, since numba itself would not notice.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np

from .comparisons import Comparisons
from .rng import next_index, next_unit
from .trueskill import rate_1vs1

# (seeds of some runs, their mu rows, their var rows) -> each run's ok flag.
RunsKernel = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class PairPools:
    """Comparisons grouped by unordered pair, CSR style.

    The comparisons of systems a and b are rows ``offsets[a, b]:offsets[a, b] + counts[a, b]``
    of ``games``; both matrices are symmetric, so a kernel reads row a of each without
    ordering the pair.
    """

    counts: np.ndarray  # int64[n, n]
    partner: np.ndarray  # float64[n, n]: 1.0 where counts > 0, else 0.0
    offsets: np.ndarray  # int64[n, n]
    games: np.ndarray  # int32[n_comparisons, 3], see `games`, grouped by pair


class KernelParams(NamedTuple):
    """TrueSkillParams as the kernels take them: plain numbers, for numba specialises on
    their types (not on a dataclass), and variances where the formulas square."""

    mu0: float
    var0: float  # sigma0 ** 2
    beta2: float
    tau2: float
    draw_margin: float
    exact: bool


def pair_pools(comparisons: Comparisons, n_systems: int) -> PairPools:
    lo = np.minimum(comparisons.winner, comparisons.loser).astype(np.int64)
    hi = np.maximum(comparisons.winner, comparisons.loser).astype(np.int64)
    key = lo * n_systems + hi
    order = np.argsort(key, kind="stable")
    counts = np.bincount(key, minlength=n_systems * n_systems).astype(np.int64)
    starts = np.triu((np.cumsum(counts) - counts).reshape(n_systems, n_systems), 1)
    counts = counts.reshape(n_systems, n_systems)
    counts = counts + counts.T
    return PairPools(
        counts=counts,
        partner=(counts > 0).astype(np.float64),
        offsets=starts + starts.T,
        games=games(comparisons)[order],
    )


def games(comparisons: Comparisons) -> np.ndarray:
    """Rows (winner, loser, draw as 0/1): a random draw then reads one cache line, not three
    arrays, which matters once the comparisons outgrow the CPU caches."""
    return np.stack(
        [comparisons.winner, comparisons.loser, comparisons.draw.astype(np.int32)], axis=1
    )


@numba.njit(cache=True)
def _max_var_system(var: np.ndarray, active: np.ndarray) -> int:
    # Strict '>' keeps the lowest index on ties, as the protocol asks.
    best, best_var = -1, -math.inf
    for s in range(var.shape[0]):
        if active[s] and var[s] > best_var:
            best, best_var = s, var[s]
    return best


# Opponent weights exp(-|mu_a - mu_b|) would cost one exp per candidate per update. Instead
# each system keeps up = exp(mu - center) and down = exp(center - mu), refreshed when its mu
# changes, and a weight is min(up_b * down_a, up_a * down_b) = exp(-|mu_a - mu_b|). While
# every |mu - center| stays within _EXP_RANGE, all factors and products are normal doubles
# (exp(+-600)), so a weight is exact to a few ulps and never 0. With the E2E constants mu
# moves by a few units at most; a spread over 2 * _EXP_RANGE is reported as out of range.
_EXP_RANGE = 300.0


# min and max of two numbers as Python has them (the first on ties). The builtins do not
# compile for numba's CUDA target (it picks their one-iterable overload), and these
# functions run there too (trueskill_cuda.py).
@numba.njit(cache=True)
def _smaller(x, y):  # type: ignore[no-untyped-def]
    return y if y < x else x


@numba.njit(cache=True)
def _larger(x, y):  # type: ignore[no-untyped-def]
    return y if y > x else x


@numba.njit(cache=True)
def _set_factors(mu: np.ndarray, center: float, up: np.ndarray, down: np.ndarray, s: int) -> None:
    up[s] = math.exp(mu[s] - center)
    down[s] = math.exp(center - mu[s])


@numba.njit(cache=True)
def _recenter(mu: np.ndarray, up: np.ndarray, down: np.ndarray) -> tuple[float, bool]:
    """New center mid-range; returns (center, whether every factor is in range)."""
    # Loops, not mu.max(): these functions also compile for CUDA (trueskill_cuda.py).
    top, bottom = mu[0], mu[0]
    for s in range(1, mu.shape[0]):
        top, bottom = _larger(top, mu[s]), _smaller(bottom, mu[s])
    center = 0.5 * (top + bottom)
    for s in range(mu.shape[0]):
        _set_factors(mu, center, up, down, s)
    return center, top - bottom <= 2 * _EXP_RANGE


@numba.njit(cache=True)
def _draw_opponent(
    state: np.uint64,
    a: int,
    up: np.ndarray,
    down: np.ndarray,
    partner: np.ndarray,
    cum: np.ndarray,
) -> tuple[np.uint64, int]:
    """Draw b with probability proportional to exp(-|mu_a - mu_b|) among partner[a, b] > 0.

    Multiplying by the 0/1 partner matrix rather than branching, and indexing it in place
    rather than slicing a row (a slice is an array whose reference counting costs more
    than this loop for small n), keeps the loop tight.
    """
    total = 0.0
    up_a, down_a = up[a], down[a]
    for b in range(up.shape[0]):
        total += _smaller(up[b] * down_a, up_a * down[b]) * partner[a, b]
        cum[b] = total
    state, u = next_unit(state)
    return state, _first_above(cum, u * total)


@numba.njit(cache=True)
def _first_above(cum: np.ndarray, target: float) -> int:
    """Smallest b with cum[b] > target, for nondecreasing cum.

    Counting the entries <= target has no data-dependent branch (a binary search
    mispredicts about half its steps). A zero-weight b repeats the sum before it, so it is
    never the answer. u < 1, but u * total may round up to total: then take the last b
    with positive weight.
    """
    n = cum.shape[0]
    j = 0
    for b in range(n):
        j += cum[b] <= target
    if j == n:
        j = n - 1
        while j > 0 and cum[j - 1] == cum[j]:
            j -= 1
    return j


@numba.njit(cache=True)
def _apply(
    games: np.ndarray, j: int, mu: np.ndarray, var: np.ndarray, constants: KernelParams
) -> bool:
    winner, loser, drawn = games[j, 0], games[j, 1], games[j, 2] != 0
    return rate_1vs1(
        mu,
        var,
        winner,
        loser,
        drawn,
        constants.beta2,
        constants.tau2,
        constants.draw_margin,
        constants.exact,
    )


@numba.njit(cache=True)
def _start(mu: np.ndarray, var: np.ndarray, constants: KernelParams) -> None:
    for s in range(mu.shape[0]):
        mu[s], var[s] = constants.mu0, constants.var0


@numba.njit(cache=True)
def e2e_run(
    state: np.uint64,
    pools: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    active: np.ndarray,
    n_updates: int,
    mu: np.ndarray,
    var: np.ndarray,
    scratch: np.ndarray,
    constants: KernelParams,
) -> bool:
    """One run of the E2E protocol into ``mu`` and ``var``; ``pools`` is PairPools' (counts,
    partner, offsets, games), ``scratch`` float64[3, n].

    It allocates nothing, so that the CPU's threads and the GPU's (trueskill_cuda.py) run
    this same function."""
    counts, partner, offsets, games = pools
    _start(mu, var, constants)
    cum, up, down = scratch[0], scratch[1], scratch[2]
    center, ok = _recenter(mu, up, down)
    for _ in range(n_updates):
        a = _max_var_system(var, active)
        if a < 0:
            break  # no comparisons at all
        state, b = _draw_opponent(state, a, up, down, partner, cum)
        state, i = next_index(state, counts[a, b])
        ok &= _apply(games, offsets[a, b] + i, mu, var, constants)
        _set_factors(mu, center, up, down, a)
        _set_factors(mu, center, up, down, b)
        if _larger(abs(mu[a] - center), abs(mu[b] - center)) > _EXP_RANGE:
            center, in_range = _recenter(mu, up, down)
            ok &= in_range
    return ok


@numba.njit(cache=True, parallel=True)
def _e2e_runs(
    seeds: np.ndarray,
    pools: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    active: np.ndarray,
    n_updates: int,
    mu: np.ndarray,
    var: np.ndarray,
    constants: KernelParams,
) -> np.ndarray:
    ok = np.empty(seeds.shape[0], dtype=np.bool_)
    for r in numba.prange(seeds.shape[0]):
        scratch = np.empty((3, mu.shape[1]))
        ok[r] = e2e_run(seeds[r], pools, active, n_updates, mu[r], var[r], scratch, constants)
    return ok


@numba.njit(cache=True)
def bootstrap_run(
    state: np.uint64,
    games: np.ndarray,
    unit_starts: np.ndarray,
    mu: np.ndarray,
    var: np.ndarray,
    constants: KernelParams,
) -> bool:
    """One run of the unit bootstrap: U units drawn with replacement, each drawn unit's
    comparisons applied in their order (`games` grouped by unit, unit u's rows
    unit_starts[u]:unit_starts[u + 1]). Like `e2e_run`, shared by the CPU and GPU paths."""
    _start(mu, var, constants)
    ok = True
    units = unit_starts.shape[0] - 1
    for _ in range(units):
        state, u = next_index(state, units)
        for j in range(unit_starts[u], unit_starts[u + 1]):
            ok &= _apply(games, j, mu, var, constants)
    return ok


@numba.njit(cache=True, parallel=True)
def _bootstrap_runs(
    seeds: np.ndarray,
    games: np.ndarray,
    unit_starts: np.ndarray,
    mu: np.ndarray,
    var: np.ndarray,
    constants: KernelParams,
) -> np.ndarray:
    ok = np.empty(seeds.shape[0], dtype=np.bool_)
    for r in numba.prange(seeds.shape[0]):
        ok[r] = bootstrap_run(seeds[r], games, unit_starts, mu[r], var[r], constants)
    return ok
