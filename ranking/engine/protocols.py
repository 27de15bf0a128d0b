"""Resampling protocols: R TrueSkill runs over a set of comparisons, in parallel over runs.

The kernels here inline those of trueskill.py and rng.py; numba_cache.py clears the disk
cache when any of them changes, since numba itself would not notice. Under `gpu("auto")`
the runs go to a CUDA GPU where numba finds one (trueskill_cuda.py), else here.
"""

import logging
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import ModuleType
from typing import Literal, NamedTuple, get_args

import numba
import numpy as np

from .comparisons import Comparisons
from .rng import next_index, next_unit, run_seeds
from .trueskill import Backend, TrueSkillParams, rate_1vs1

Progress = Callable[[int, int], None]
# (seeds of some runs, their mu rows, their var rows) -> each run's ok flag.
RunsKernel = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
GpuMode = Literal["auto", "off"]
GPU_MODES: tuple[str, ...] = get_args(GpuMode)

log = logging.getLogger(__name__)
_gpu_mode: ContextVar[str] = ContextVar("ranking_gpu", default="off")


@dataclass(frozen=True)
class RunsResult:
    """Final ratings of every run; row r of ``mu`` and ``sigma`` is run r."""

    protocol: str
    params: TrueSkillParams
    mu: np.ndarray  # float64[runs, n_systems]
    sigma: np.ndarray  # float64[runs, n_systems]
    n_updates: int  # updates per run
    n_comparisons: np.ndarray  # int64[n_systems]: comparisons each system takes part in
    seed: int | None  # None when a Generator was passed

    @property
    def runs(self) -> int:
        return self.mu.shape[0]


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


def e2e_params(n_comparisons: int, backend: Backend = "package") -> TrueSkillParams:
    """Sakaguchi et al.'s constants; beta grows with the number of updates N."""
    n_updates = n_comparisons + 1
    return TrueSkillParams(
        mu=0.0,
        sigma=0.5,
        beta=0.5 * n_updates / 40.0,
        tau=0.0,
        draw_probability=0.25,
        backend=backend,
    )


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
    counts: np.ndarray,
    partner: np.ndarray,
    offsets: np.ndarray,
    games: np.ndarray,
    active: np.ndarray,
    n_updates: int,
    mu: np.ndarray,
    var: np.ndarray,
    scratch: np.ndarray,
    constants: KernelParams,
) -> bool:
    """One run of the E2E protocol into ``mu`` and ``var``; ``scratch`` is float64[3, n].

    It allocates nothing, so that the CPU's threads and the GPU's (trueskill_cuda.py) run
    this same function."""
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
    counts, partner, offsets, games = pools
    ok = np.empty(seeds.shape[0], dtype=np.bool_)
    for r in numba.prange(seeds.shape[0]):
        scratch = np.empty((3, mu.shape[1]))
        ok[r] = e2e_run(
            seeds[r],
            counts,
            partner,
            offsets,
            games,
            active,
            n_updates,
            mu[r],
            var[r],
            scratch,
            constants,
        )
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


def e2e_protocol(
    comparisons: Comparisons,
    n_systems: int,
    runs: int,
    seed: int | np.random.Generator,
    progress: Progress | None = None,
    *,
    backend: Backend = "package",
    chunk_runs: int | None = None,
) -> RunsResult:
    """Sakaguchi, Post & Van Durme (WMT 2014), as used for E2E Table 11.

    Each run makes N = len(comparisons) + 1 updates. An update takes the system with the
    largest sigma (lowest index on ties; systems without comparisons are left out), draws
    its opponent with probability proportional to exp(-|mu_a - mu_b|) among the systems it
    was compared with, draws one comparison of that pair uniformly with replacement, and
    applies it as recorded. Runs go in parallel; ``progress(done, total)`` follows chunks.
    """
    _check(comparisons, n_systems, runs)
    params = e2e_params(len(comparisons), backend)
    pools = pair_pools(comparisons, n_systems)
    per_system = comparisons.per_system(n_systems)
    n_updates, constants = len(comparisons) + 1, _kernel_params(params)

    def on_cpu(seeds: np.ndarray, mu: np.ndarray, var: np.ndarray) -> np.ndarray:
        pool = (pools.counts, pools.partner, pools.offsets, pools.games)
        return _e2e_runs(seeds, pool, per_system > 0, n_updates, mu, var, constants)

    def on_gpu(cuda_runs: ModuleType) -> RunsKernel:
        return cuda_runs.e2e_kernel(pools, per_system > 0, n_updates, constants)

    kernel, chunk_runs = _placed(on_cpu, on_gpu, runs, chunk_runs)
    mu, sigma = _run_in_chunks(kernel, run_seeds(seed, runs), n_systems, progress, chunk_runs)
    return RunsResult("e2e", params, mu, sigma, n_updates, per_system, _seed_or_none(seed))


def bootstrap_protocol(
    comparisons: Comparisons,
    n_systems: int,
    runs: int,
    seed: int | np.random.Generator,
    progress: Progress | None = None,
    *,
    backend: Backend = "package",
    chunk_runs: int | None = None,
) -> RunsResult:
    """The unit bootstrap: each run draws as many units (Comparisons.unit, the items; each
    comparison its own unit where none are known) as there are, with replacement, and
    applies the comparisons of each drawn unit, unit by unit, with the E2E protocol's
    TrueSkill constants. Drawing whole items keeps together what shares outputs: a run
    then varies as much as a new campaign of the same design would."""
    _check(comparisons, n_systems, runs)
    params = e2e_params(len(comparisons), backend)
    constants = _kernel_params(params)
    units = comparisons.unit if comparisons.unit is not None else np.arange(len(comparisons))
    by_unit = np.argsort(units, kind="stable")
    grouped = np.ascontiguousarray(games(comparisons)[by_unit])
    _, sizes = np.unique(units, return_counts=True)
    unit_starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)

    def on_cpu(seeds: np.ndarray, mu: np.ndarray, var: np.ndarray) -> np.ndarray:
        return _bootstrap_runs(seeds, grouped, unit_starts, mu, var, constants)

    def on_gpu(cuda_runs: ModuleType) -> RunsKernel:
        return cuda_runs.bootstrap_kernel(grouped, unit_starts, constants)

    kernel, chunk_runs = _placed(on_cpu, on_gpu, runs, chunk_runs)
    mu, sigma = _run_in_chunks(kernel, run_seeds(seed, runs), n_systems, progress, chunk_runs)
    per_system = comparisons.per_system(n_systems)
    n_updates = len(comparisons)
    return RunsResult("bootstrap", params, mu, sigma, n_updates, per_system, _seed_or_none(seed))


PROTOCOLS = {"e2e": e2e_protocol, "bootstrap": bootstrap_protocol}


@contextmanager
def threads(count: int) -> Iterator[None]:
    """The compiled runs on `count` threads (at most numba's, the machine's cores unless
    NUMBA_NUM_THREADS says otherwise), then as before. Each run draws from its own seed
    (rng.run_seeds), so results do not depend on the count."""
    before = numba.get_num_threads()
    most = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    numba.set_num_threads(max(1, min(count, most)))
    try:
        yield
    finally:
        numba.set_num_threads(before)


@contextmanager
def gpu(mode: str) -> Iterator[None]:
    """Where the runs go: "auto" to a CUDA GPU when numba finds one, else (and for "off")
    to the CPU's threads. A run draws the same numbers either way; its ratings agree to
    about 1e-12 (the device's exp and erfc; trueskill_cuda.py)."""
    if mode not in GPU_MODES:
        raise ValueError(f"unknown GPU mode {mode!r}: use one of {', '.join(GPU_MODES)}")
    token = _gpu_mode.set(mode)
    try:
        yield
    finally:
        _gpu_mode.reset(token)


def gpu_available() -> bool:
    """Whether numba finds a CUDA device; numba.cuda is imported only when asked."""
    try:
        from numba import cuda  # noqa: PLC0415 - only where a GPU may be used
    except ImportError:
        return False
    return bool(cuda.is_available())


def _placed(
    cpu: RunsKernel,
    on_gpu: Callable[[ModuleType], RunsKernel],
    runs: int,
    chunk_runs: int | None,
) -> tuple[RunsKernel, int | None]:
    """(kernel, chunk_runs) for the runs where `gpu` sends them. On the GPU all runs go in
    one launch unless chunk_runs says otherwise (chunks would run one after the other,
    each on a few of its threads), and a failure to start or to run the GPU's kernel
    (no driver, a compile or launch error) is logged and the CPU's runs instead."""
    if _gpu_mode.get() == "off" or not gpu_available():
        return cpu, chunk_runs
    try:
        from . import trueskill_cuda  # noqa: PLC0415 - it loads numba.cuda

        gpu_kernel = on_gpu(trueskill_cuda)
        log.info("TrueSkill runs on the GPU (%s)", trueskill_cuda.device_name())
    except Exception:  # numba.cuda raises many kinds; the CPU gives the same ratings
        log.warning("TrueSkill runs on the CPU: the GPU path failed to start", exc_info=True)
        return cpu, chunk_runs
    failed = False

    def kernel(seeds: np.ndarray, mu: np.ndarray, var: np.ndarray) -> np.ndarray:
        nonlocal failed
        if not failed:
            try:
                return gpu_kernel(seeds, mu, var)
            except Exception:
                log.warning("TrueSkill runs on the CPU: the GPU path failed", exc_info=True)
                failed = True
        return cpu(seeds, mu, var)

    return kernel, runs if chunk_runs is None else chunk_runs


def _check(comparisons: Comparisons, n_systems: int, runs: int) -> None:
    if runs < 1:
        raise ValueError("runs must be at least 1")
    if len(comparisons) and not (
        0 <= min(comparisons.winner.min(), comparisons.loser.min())
        and max(comparisons.winner.max(), comparisons.loser.max()) < n_systems
    ):
        raise ValueError(f"system indices must lie in [0, {n_systems})")


def _kernel_params(params: TrueSkillParams) -> KernelParams:
    return KernelParams(
        mu0=float(params.mu),
        var0=float(params.sigma**2),
        beta2=float(params.beta**2),
        tau2=float(params.tau**2),
        draw_margin=float(params.draw_margin()),
        exact=bool(params.exact),
    )


def _seed_or_none(seed: int | np.random.Generator) -> int | None:
    return int(seed) if isinstance(seed, int | np.integer) else None


def _chunk_size(runs: int, progress: Progress | None, chunk_runs: int | None) -> int:
    if chunk_runs is not None:
        return max(1, chunk_runs)
    if progress is None:
        return runs
    # About ten progress reports, each chunk still a multiple of the thread count.
    threads = numba.get_num_threads()
    return threads * max(1, math.ceil(runs / 10 / threads))


def _run_in_chunks(
    kernel: RunsKernel,
    seeds: np.ndarray,
    n_systems: int,
    progress: Progress | None,
    chunk_runs: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    runs = len(seeds)
    mu = np.empty((runs, n_systems))
    var = np.empty((runs, n_systems))
    step = _chunk_size(runs, progress, chunk_runs)
    for start in range(0, runs, step):
        stop = min(start + step, runs)
        if not kernel(seeds[start:stop], mu[start:stop], var[start:stop]).all():
            raise FloatingPointError(
                "ratings out of range: a TrueSkill update the trueskill package would refuse,"
                " or (E2E protocol) mu spread over 600"
            )
        if progress is not None:
            progress(stop, runs)
    return mu, np.sqrt(var)
