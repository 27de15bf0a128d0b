"""Speed of the Bradley-Terry bootstrap against the straightforward scipy fit per resample.

Run from the repository root:  python benchmarks/bench_bradley_terry.py [--rounds 1000]
Not collected by pytest. Both run in this process on E2E's quality ratings (29,790
comparisons, 21 systems): the engine's bootstrap (a multinomial draw over pair outcomes per
resample, every resample fitted at once by Newton's method on 21 x 21 matrices) and the
straightforward way: each resample drawn row by row from the comparisons, as Chatbot
Arena's first leaderboards drew them, and fitted by the engine's reference fit (scipy's
minimize, one log-likelihood term per comparison). The scipy path is timed on
--scipy-rounds resamples (20 by default) and extrapolated to --rounds. Takes a few seconds.
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from bench_ranking import QUALITY_CSV, best_of, load_quality  # noqa: E402

from ranking.engine import Comparisons, bradley_terry_protocol  # noqa: E402
from ranking.engine.bradley_terry import (  # noqa: E402
    PairOutcomes,
    fit_ratings,
    reference_ratings,
    win_matrices,
)


def scipy_bootstrap(comparisons: Comparisons, n_systems: int, rounds: int, seed: int) -> None:
    """Resample the comparisons with replacement, fit each resample with scipy."""
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        rows = rng.integers(len(comparisons), size=len(comparisons))
        drawn = Comparisons(
            comparisons.winner[rows], comparisons.loser[rows], comparisons.draw[rows]
        )
        reference_ratings(drawn, n_systems)


def largest_difference_on_the_same_draws(c: Comparisons, n: int, rounds: int) -> float:
    """Both fits of the same resamples: the engine's from the cell counts, scipy's from the
    comparisons those counts stand for, written out."""
    outcomes = PairOutcomes.count_of(c, n)
    counts = np.random.default_rng(1).multinomial(len(c), outcomes.count / len(c), size=rounds)
    fast, _ = fit_ratings(win_matrices(outcomes, counts, n))
    largest = 0.0
    for r in range(rounds):
        drawn = Comparisons(
            np.repeat(outcomes.winner, counts[r]),
            np.repeat(outcomes.loser, counts[r]),
            np.repeat(outcomes.draw, counts[r]),
        )
        largest = max(largest, float(np.abs(fast[r] - reference_ratings(drawn, n)).max()))
    return largest


def report(rounds: int, scipy_rounds: int) -> None:
    names, c = load_quality(QUALITY_CSV)
    n = len(names)
    print(f"E2E quality: {len(c):,} comparisons, {n} systems, {c.draw.mean():.0%} draws")
    full = bradley_terry_protocol(c, n, 10, seed=0).rating
    difference = np.abs(full - reference_ratings(c, n)).max()
    print(f"  fit to all comparisons, engine vs scipy: largest difference {difference:.1e} points")
    same = largest_difference_on_the_same_draws(c, n, scipy_rounds)
    print(f"  {scipy_rounds} resamples, the same draws fitted both ways: largest {same:.1e} points")

    wall, cpu = best_of(3, bradley_terry_protocol, c, n, rounds, seed=0)
    print(f"  engine, R={rounds}: {wall:.3f} s wall, {cpu:.3f} s CPU (best of 3)")
    scipy_wall, scipy_cpu = best_of(1, scipy_bootstrap, c, n, scipy_rounds, seed=0)
    scale = rounds / scipy_rounds
    print(
        f"  scipy per resample, R={scipy_rounds}: {scipy_wall:.2f} s wall, {scipy_cpu:.2f} s CPU;"
        f" extrapolated to R={rounds}: {scipy_wall * scale:.1f} s wall"
    )
    print(f"  ratio: x{scipy_wall * scale / wall:,.0f} wall, x{scipy_cpu * scale / cpu:,.0f} CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--scipy-rounds", type=int, default=20)
    args = parser.parse_args()
    if not QUALITY_CSV.exists():
        print(f"skipped: {QUALITY_CSV} not found (../shared is absent)")
        return
    print(f"{os.cpu_count()} CPUs; load average before: {os.getloadavg()[0]:.1f}")
    start = time.perf_counter()
    report(args.rounds, args.scipy_rounds)
    print(f"load average after: {os.getloadavg()[0]:.1f}; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
