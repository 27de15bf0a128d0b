"""Resampling protocols: R TrueSkill runs over a set of comparisons, in parallel over runs,
on the CPU's threads or, under `gpu("auto")`, a CUDA GPU where numba finds one
(trueskill_cuda.py); the runs themselves are trueskill_kernels.py's.
"""

import logging
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, NamedTuple, get_args

import numba
import numpy as np

from .comparisons import Comparisons
from .progress import Progress
from .rng import run_seeds
from .trueskill import Backend, TrueSkillParams
from .trueskill_kernels import (
    KernelParams,
    RunsKernel,
    _bootstrap_runs,
    _e2e_runs,
    games,
    pair_pools,
)

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
    return _runs(
        "e2e", _e2e_kernels, comparisons, n_systems, runs, seed, progress, backend, chunk_runs
    )


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
    return _runs(
        "bootstrap",
        _bootstrap_kernels,
        comparisons,
        n_systems,
        runs,
        seed,
        progress,
        backend,
        chunk_runs,
    )


class _Kernels(NamedTuple):
    """A protocol's runs: on the CPU, how to make them on the GPU, updates per run."""

    cpu: RunsKernel
    gpu: Callable[[], RunsKernel]
    n_updates: int


_KernelsFor = Callable[[Comparisons, int, KernelParams], _Kernels]


def _runs(
    protocol: str,
    kernels_for: _KernelsFor,
    comparisons: Comparisons,
    n_systems: int,
    runs: int,
    seed: int | np.random.Generator,
    progress: Progress | None,
    backend: Backend,
    chunk_runs: int | None,
) -> RunsResult:
    """The runs of `kernels_for`'s kernels, with the E2E protocol's constants, where `gpu`
    sends them."""
    _check(comparisons, n_systems, runs)
    params = e2e_params(len(comparisons), backend)
    kernels = kernels_for(comparisons, n_systems, _kernel_params(params))
    kernel, chunk_runs = _placed(kernels.cpu, kernels.gpu, runs, chunk_runs)
    mu, sigma = _run_in_chunks(kernel, run_seeds(seed, runs), n_systems, progress, chunk_runs)
    per_system = comparisons.per_system(n_systems)
    n_updates, seed_used = kernels.n_updates, _seed_or_none(seed)
    return RunsResult(protocol, params, mu, sigma, n_updates, per_system, seed_used)


def _e2e_kernels(comparisons: Comparisons, n_systems: int, constants: KernelParams) -> _Kernels:
    pools = pair_pools(comparisons, n_systems)
    active = comparisons.per_system(n_systems) > 0
    n_updates = len(comparisons) + 1
    arrays = (pools.counts, pools.partner, pools.offsets, pools.games)

    def on_cpu(seeds: np.ndarray, mu: np.ndarray, var: np.ndarray) -> np.ndarray:
        return _e2e_runs(seeds, arrays, active, n_updates, mu, var, constants)

    def on_gpu() -> RunsKernel:
        from .trueskill_cuda import e2e_kernel  # noqa: PLC0415 - it loads numba.cuda

        return e2e_kernel(pools, active, n_updates, constants)

    return _Kernels(on_cpu, on_gpu, n_updates)


def _bootstrap_kernels(
    comparisons: Comparisons, n_systems: int, constants: KernelParams
) -> _Kernels:
    units = comparisons.unit if comparisons.unit is not None else np.arange(len(comparisons))
    by_unit = np.argsort(units, kind="stable")
    grouped = np.ascontiguousarray(games(comparisons)[by_unit])
    _, sizes = np.unique(units, return_counts=True)
    unit_starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)

    def on_cpu(seeds: np.ndarray, mu: np.ndarray, var: np.ndarray) -> np.ndarray:
        return _bootstrap_runs(seeds, grouped, unit_starts, mu, var, constants)

    def on_gpu() -> RunsKernel:
        from .trueskill_cuda import bootstrap_kernel  # noqa: PLC0415 - it loads numba.cuda

        return bootstrap_kernel(grouped, unit_starts, constants)

    return _Kernels(on_cpu, on_gpu, len(comparisons))


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
    on_gpu: Callable[[], RunsKernel],
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
        from .trueskill_cuda import device_name  # noqa: PLC0415 - it loads numba.cuda

        gpu_kernel = on_gpu()
        log.info("TrueSkill runs on the GPU (%s)", device_name())
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
