"""Compiles the engine's kernels into numba's disk cache before the first ranking needs them.

On a new install the cache is empty: the first ranking waits about 15 s of one core for
the kernels, and every process that ranks before the cache is written (each Celery worker,
`manage.py rank`, a test run's processes) compiles them again on its own. Running this
once, right after installing, leaves every later process loading them (under a second).

    python -m ranking.engine.precompile

It ranks a made-up campaign of three systems with each kernel path: the E2E protocol, the
unit bootstrap, and the calibrated verdict with its permutations and joint claims. The
dataclasses normalise their arrays' dtypes, so these calls compile the signatures a real
ranking uses.
"""

import time

import numpy as np

from .calibrated import calibrated_verdict
from .comparisons import Comparisons
from .trueskill_runs import bootstrap_protocol, e2e_protocol
from .units import UnitPairs, with_units


def compile_kernels() -> None:
    comparisons = Comparisons(
        winner=np.array([0, 1, 2, 0, 1, 0]),
        loser=np.array([1, 2, 0, 2, 0, 1]),
        draw=np.array([False, False, True, False, False, True]),
        unit=np.array([0, 0, 1, 1, 2, 2]),
    )
    systems = 3
    e2e_protocol(comparisons, systems, runs=2, seed=0)
    bootstrap_protocol(comparisons, systems, runs=2, seed=0)
    pairs = UnitPairs.of(with_units(comparisons))
    calibrated_verdict(pairs, systems, comparisons.per_system(systems), permutations=4, seed=0)


if __name__ == "__main__":
    started = time.monotonic()
    compile_kernels()
    print(f"ranking.engine.precompile: kernels ready in {time.monotonic() - started:.1f} s")
