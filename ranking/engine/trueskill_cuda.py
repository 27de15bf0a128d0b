"""TrueSkill's runs on a CUDA GPU, one thread per run.

Each thread calls the very functions a CPU thread calls, `trueskill_kernels.e2e_run` and
`trueskill_kernels.bootstrap_run` (numba compiles njit functions for the device when a kernel calls
them), from the same SplitMix64 seed (`rng.run_seeds`), so a run draws the same numbers and
applies the same updates. Its ratings equal the CPU's up to the device's math library
(libdevice's exp and erfc, within an ulp or two of the CPU's) and the fused multiply-adds
its compiler makes: about 1e-12 apart, not always bit for bit.

Imported only when the GPU path is chosen (`trueskill_runs.gpu`), so numba.cuda costs nothing
otherwise. Under numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, with NUMBA_DISABLE_JIT=1
so that the shared functions run as Python on the simulator's arrays) the same kernels run
on the CPU; the tests check them that way.
"""

from typing import Any

import numpy as np
from numba import cuda

from .trueskill_kernels import KernelParams, PairPools, RunsKernel, bootstrap_run, e2e_run

# One warp per block: E2E asks for 200 runs, a few warps, so they spread over as many
# multiprocessors as there are warps, each with an L1 cache of its own for its ratings.
_THREADS_PER_BLOCK = 32


def device_name() -> str:
    # bytes from ctypes, str from NVIDIA's bindings; the simulator's device has none.
    name = getattr(cuda.current_context().device, "name", "CUDA simulator")
    return name.decode() if isinstance(name, bytes) else str(name)


def e2e_kernel(
    pools: PairPools, active: np.ndarray, n_updates: int, constants: KernelParams
) -> RunsKernel:
    """The E2E runs as `trueskill_kernels._e2e_runs` makes them, on the GPU; the comparisons are
    copied to the device once, here, for every chunk of runs."""
    on_device = [
        cuda.to_device(np.ascontiguousarray(array))
        for array in (pools.counts, pools.partner, pools.offsets, pools.games, active)
    ]

    def kernel(seeds: np.ndarray, mu: np.ndarray, var: np.ndarray) -> np.ndarray:
        scratch = cuda.device_array((len(seeds), 3, mu.shape[1]))
        return _launch(_e2e_runs, seeds, mu, var, *on_device, n_updates, scratch, constants)

    return kernel


def bootstrap_kernel(
    games: np.ndarray, unit_starts: np.ndarray, constants: KernelParams
) -> RunsKernel:
    """The unit bootstrap's runs as `trueskill_kernels._bootstrap_runs` makes them, on the GPU."""
    on_device = cuda.to_device(np.ascontiguousarray(games))
    starts_on_device = cuda.to_device(np.ascontiguousarray(unit_starts))

    def kernel(seeds: np.ndarray, mu: np.ndarray, var: np.ndarray) -> np.ndarray:
        return _launch(_bootstrap_runs, seeds, mu, var, on_device, starts_on_device, constants)

    return kernel


def _launch(
    kernel: Any, seeds: np.ndarray, mu: np.ndarray, var: np.ndarray, *inputs: Any
) -> np.ndarray:
    """Run `kernel` over the runs of `seeds`, ratings into the host arrays ``mu`` and ``var``;
    returns each run's ok flag, as the CPU kernels do."""
    runs = len(seeds)
    mu_d, var_d = cuda.device_array(mu.shape), cuda.device_array(var.shape)
    ok_d = cuda.device_array(runs, dtype=np.bool_)
    blocks = -(-runs // _THREADS_PER_BLOCK)
    kernel[blocks, _THREADS_PER_BLOCK](cuda.to_device(seeds), mu_d, var_d, ok_d, *inputs)
    mu[:] = mu_d.copy_to_host()
    var[:] = var_d.copy_to_host()
    return ok_d.copy_to_host()


@cuda.jit
def _e2e_runs(  # type: ignore[no-untyped-def]
    seeds, mu, var, ok, counts, partner, offsets, games, active, n_updates, scratch, k
):
    r: int = cuda.grid(1)  # type: ignore[call-arg]
    if r < seeds.shape[0]:
        pools = (counts, partner, offsets, games)
        ok[r] = e2e_run(seeds[r], pools, active, n_updates, mu[r], var[r], scratch[r], k)


@cuda.jit
def _bootstrap_runs(seeds, mu, var, ok, games, unit_starts, k):  # type: ignore[no-untyped-def]
    r: int = cuda.grid(1)  # type: ignore[call-arg]
    if r < seeds.shape[0]:
        ok[r] = bootstrap_run(seeds[r], games, unit_starts, mu[r], var[r], k)
