"""Speed of the ranking engine against a plain Python loop over trueskill.rate_1vs1.

Run from the repository root:  python benchmarks/bench_ranking.py
Not collected by pytest. Uses a fresh numba cache directory so the first-time JIT compile
is measured, then times a second process that loads the compiled kernels from that cache.
Takes about two minutes on two cores.
"""

import csv
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="bench-numba-"))
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402
import numpy as np  # noqa: E402
import trueskill  # noqa: E402

from ranking.engine import (  # noqa: E402
    Comparisons,
    bootstrap_protocol,
    comparisons_from_hits,
    e2e_params,
    e2e_protocol,
)

QUALITY_CSV = ROOT.parent / "shared" / "data" / "e2e" / "human_ratings" / "quality.csv"
PROTOCOLS = {"e2e": e2e_protocol, "bootstrap": bootstrap_protocol}


def best_of(repeats: int, fn, *args, **kwargs) -> tuple[float, float]:
    """Least wall-clock and least process CPU seconds over ``repeats`` calls.

    CPU seconds divided by the thread count is what the wall clock would read on cores
    nobody else uses; on a shared machine the wall clock can be far above it.
    """
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn(*args, **kwargs)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def load_quality(path: Path) -> tuple[list[str], Comparisons]:
    names: dict[str, int] = {}
    systems, scores = [], []
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            systems.append([names.setdefault(row[f"sys{i}"], len(names)) for i in range(1, 6)])
            scores.append([float(row[f"quality{i}"]) for i in range(1, 6)])
    return list(names), comparisons_from_hits(np.array(systems), np.array(scores))


def synthetic(n_systems: int, n_comparisons: int, seed: int = 2018) -> Comparisons:
    """RankME-like HITs of 5 systems: score = latent strength + noise, on a 0-100 scale
    rounded to 10s so that about a fifth of the pairs draw."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, n_systems)
    hits = n_comparisons // 10
    systems = np.argsort(rng.random((hits, n_systems)), axis=1)[:, :5]
    noisy = strength[systems] + rng.normal(0, 1.5, systems.shape)
    scores = np.round(np.clip(50 + 15 * noisy, 1, 100), -1)
    return comparisons_from_hits(systems, scores)


# --- the same protocols as plain Python over the trueskill package -----------------------


def package_run(protocol: str, c: Comparisons, n: int, n_updates: int, seed: int) -> list:
    p = e2e_params(len(c))
    env = trueskill.TrueSkill(p.mu, p.sigma, p.beta, p.tau, p.draw_probability)
    rng, ratings = random.Random(seed), [env.create_rating() for _ in range(n)]
    games = list(zip(c.winner.tolist(), c.loser.tolist(), c.draw.tolist(), strict=True))
    pools = _pools(games)
    for _ in range(n_updates):
        if protocol == "e2e":
            win, lose, drawn = rng.choice(pools[_pick_pair(ratings, pools, rng)])
        else:
            win, lose, drawn = rng.choice(games)
        ratings[win], ratings[lose] = trueskill.rate_1vs1(
            ratings[win], ratings[lose], drawn, env=env
        )
    return [r.mu for r in ratings]


def _pools(games: list) -> dict:
    pools: dict = {}
    for game in games:
        pools.setdefault(frozenset(game[:2]), []).append(game)
    return pools


def _pick_pair(ratings: list, pools: dict, rng: random.Random) -> frozenset:
    a = max(range(len(ratings)), key=lambda s: (ratings[s].sigma, -s))
    partners = [b for b in range(len(ratings)) if frozenset((a, b)) in pools]
    weights = [math.exp(-abs(ratings[a].mu - ratings[b].mu)) for b in partners]
    return frozenset((a, rng.choices(partners, weights)[0]))


def package_seconds_per_run(protocol: str, c: Comparisons, n: int, max_updates: int) -> tuple:
    """Time one run, cut to max_updates updates and extrapolated to N if longer."""
    n_updates = len(c) + 1
    done = min(n_updates, max_updates)
    start = time.perf_counter()
    package_run(protocol, c, n, done, seed=0)
    return (time.perf_counter() - start) * n_updates / done, done, n_updates


# --- reports ---------------------------------------------------------------------------


def report_compile() -> None:
    tiny = Comparisons(np.array([0, 1]), np.array([1, 2]), np.array([False, True]))
    start = time.perf_counter()
    for protocol in PROTOCOLS.values():
        protocol(tiny, 3, 2, seed=0)
    compile_s = time.perf_counter() - start
    code = (
        "import time; t = time.perf_counter(); import numpy as np;"
        "from ranking.engine import Comparisons, e2e_protocol, bootstrap_protocol;"
        "c = Comparisons(np.array([0, 1]), np.array([1, 2]), np.array([False, True]));"
        "e2e_protocol(c, 3, 2, 0); bootstrap_protocol(c, 3, 2, 0);"
        "print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    print(f"JIT compile, both protocols, empty cache:   {compile_s:6.2f} s")
    print(f"new process, import + load from disk cache: {float(out.stdout):6.2f} s\n")


def report_protocol(name: str, c: Comparisons, n: int, runs: list[int], package_updates: int):
    protocol = PROTOCOLS[name]
    pkg_per_run, done, n_updates = package_seconds_per_run(name, c, n, package_updates)
    note = "" if done == n_updates else f", extrapolated from {done:,} of {n_updates:,} updates"
    print(f"  package loop: {pkg_per_run:8.2f} s per run{note}")
    for r in runs:
        wall, cpu = best_of(3 if r <= 200 else 1, protocol, c, n, r, seed=0)
        print(
            f"  engine R={r:5d}: {wall:7.3f} s wall {cpu:7.3f} s CPU  {r / wall:7.1f} runs/s  "
            f"package loop {pkg_per_run * r:7.0f} s (x{pkg_per_run * r / wall:,.0f})"
        )


def report_e2e_quality() -> None:
    if not QUALITY_CSV.exists():
        print(f"E2E quality: skipped, {QUALITY_CSV} not found (../shared is absent)\n")
        return
    names, c = load_quality(QUALITY_CSV)
    print(f"E2E quality: {len(c):,} comparisons, {len(names)} systems")
    for name in PROTOCOLS:
        print(f" protocol {name}")
        report_protocol(name, c, len(names), [100, 200, 400, 1000], package_updates=30_000)
    print()


def report_synthetic() -> None:
    start = time.perf_counter()
    c = synthetic(100, 1_000_000)
    print(f"Synthetic: {len(c):,} comparisons, 100 systems, {c.draw.mean():.0%} draws")
    print(f"  comparisons_from_hits: {time.perf_counter() - start:.2f} s (incl. generating)")
    for name in PROTOCOLS:
        print(f" protocol {name}")
        report_protocol(name, c, 100, [10, 20], package_updates=20_000)
    print(" linearity in comparisons, R=10 (CPU ns per update = CPU s / (R * N)):")
    for size in (250_000, 500_000, 1_000_000):
        sub = Comparisons(c.winner[:size], c.loser[:size], c.draw[:size])
        for name, protocol in PROTOCOLS.items():
            wall, cpu = best_of(1, protocol, sub, 100, 10, seed=0)
            print(
                f"  {name:9s} {size:>9,} comparisons: {wall:6.2f} s wall {cpu:6.2f} s CPU "
                f"{cpu / (10 * size) * 1e9:5.0f} ns/update"
            )


def main() -> None:
    print(f"numba {numba.__version__}, {numba.get_num_threads()} threads, {os.cpu_count()} CPUs")
    print(f"load average before: {os.getloadavg()[0]:.1f} (other processes share the cores)\n")
    report_compile()
    report_e2e_quality()
    report_synthetic()
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
