"""Random streams, one per run, so results depend neither on threads nor on chunking.

Each run gets its own 64-bit seed drawn from ``numpy.random.default_rng(seed)``, and inside
the compiled loop its own SplitMix64 stream (Steele, Lea & Flood 2014; passes BigCrush).
A run draws about 2 numbers per update, a tiny stretch of the 2**64 period, so streams of
different runs do not meet in practice.
"""

import numba
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


def run_seeds(seed: int | np.random.Generator, runs: int) -> np.ndarray:
    """One uint64 seed per run; for an int seed, the first k seeds do not depend on runs."""
    return np.random.default_rng(seed).integers(0, 2**64, size=runs, dtype=np.uint64)


@numba.njit(cache=True)
def next_uint64(state: np.uint64) -> tuple[np.uint64, np.uint64]:
    """Advance a SplitMix64 state; returns (new state, output)."""
    # The cast keeps the arithmetic unsigned (mod 2**64) when a caller passes a signed int.
    state = np.uint64(state) + _GOLDEN
    z = state
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return state, z ^ (z >> _S31)


@numba.njit(cache=True)
def next_unit(state: np.uint64) -> tuple[np.uint64, float]:
    """Uniform float in [0, 1) with 53 random bits."""
    state, z = next_uint64(state)
    return state, float(z >> _S11) * _TO_UNIT


@numba.njit(cache=True)
def next_index(state: np.uint64, n: int) -> tuple[np.uint64, int]:
    """Uniform integer in [0, n), n >= 1 (bias below 2**-53 * n, far under any noise here)."""
    state, u = next_unit(state)
    i = int(u * n)
    return state, i if i < n - 1 else n - 1  # not min(): see protocols._smaller
