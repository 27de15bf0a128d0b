"""TrueSkill's runs on the CPU and on a CUDA GPU, side by side in one process.

Run from the repository root:

    .venv/bin/python benchmarks/bench_trueskill_gpu.py --comparisons 2000000 --runs 200

Builds synthetic comparisons (21 systems of increasing strength, a fifth drawn, as
E2E-shaped campaigns give), times the E2E protocol and the plain bootstrap on the CPU's
threads (RANKING_PROCESSES, else all cores) and, where numba finds a CUDA device, on it
(`protocols.gpu("auto")`), and checks that the runs agree: the same draws, mu within
--tolerance. Each path runs once untimed first, so compiling is not counted. Without a
device it prints the CPU's figures and says so. Not collected by pytest.
"""

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402
import numpy as np  # noqa: E402

from ranking.engine import Comparisons, RunsResult  # noqa: E402
from ranking.engine.trueskill_runs import (  # noqa: E402
    bootstrap_protocol,
    e2e_protocol,
    gpu,
    gpu_available,
    threads,
)

PROTOCOLS = {"e2e": e2e_protocol, "bootstrap": bootstrap_protocol}
N_SYSTEMS = 21


def synthetic_comparisons(n: int, seed: int = 0) -> Comparisons:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, N_SYSTEMS, n)
    b = (a + rng.integers(1, N_SYSTEMS, n)) % N_SYSTEMS
    a_wins = rng.random(n) < 1 / (1 + np.exp((b - a) * 0.1))
    winner, loser = np.where(a_wins, a, b), np.where(a_wins, b, a)
    return Comparisons(winner.astype(np.int32), loser.astype(np.int32), rng.random(n) < 0.2)


def timed(protocol, comparisons: Comparisons, runs: int, mode: str) -> tuple[RunsResult, float]:
    with gpu(mode):
        protocol(comparisons, N_SYSTEMS, 2, seed=1)  # compiles, untimed
        started = time.perf_counter()
        result = protocol(comparisons, N_SYSTEMS, runs, seed=0)
    return result, time.perf_counter() - started


def device_name() -> str | None:
    if not gpu_available():
        return None
    from ranking.engine import trueskill_cuda  # noqa: PLC0415 - loads numba.cuda

    return trueskill_cuda.device_name()


def measure(args: argparse.Namespace) -> dict:
    comparisons = synthetic_comparisons(args.comparisons)
    device = device_name()
    report: dict = {
        "comparisons": args.comparisons,
        "runs": args.runs,
        "systems": N_SYSTEMS,
        "cpu": platform.processor() or platform.machine(),
        "cpu_threads": args.threads,
        "numba": numba.__version__,
        "device": device,
        "protocols": {},
    }
    for name in args.protocols:
        protocol = PROTOCOLS[name]
        with threads(args.threads):
            on_cpu, cpu_seconds = timed(protocol, comparisons, args.runs, "off")
        row: dict = {"cpu_seconds": round(cpu_seconds, 3)}
        print(f"{name}: CPU ({args.threads} threads) {cpu_seconds:.2f} s", flush=True)
        if device is not None:
            on_gpu, gpu_seconds = timed(protocol, comparisons, args.runs, "auto")
            difference = float(np.abs(on_gpu.mu - on_cpu.mu).max())
            row |= {
                "gpu_seconds": round(gpu_seconds, 3),
                "cpu_over_gpu": round(cpu_seconds / gpu_seconds, 2),
                "max_mu_difference": difference,
                "runs_apart": int((np.abs(on_gpu.mu - on_cpu.mu) > args.tolerance).any(1).sum()),
                "agree": difference <= args.tolerance,
            }
            print(
                f"{name}: GPU ({device}) {gpu_seconds:.2f} s, CPU/GPU {row['cpu_over_gpu']}x;"
                f" max |mu difference| {difference:.2e} ({row['runs_apart']} runs over"
                f" {args.tolerance:g})",
                flush=True,
            )
        report["protocols"][name] = row
    if device is None:
        print("no CUDA device found (numba.cuda.is_available() is False): CPU figures only")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--comparisons", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--protocols", nargs="+", choices=list(PROTOCOLS), default=["e2e"])
    parser.add_argument(
        "--threads", type=int, default=int(os.environ.get("RANKING_PROCESSES", os.cpu_count() or 1))
    )
    parser.add_argument("--tolerance", type=float, default=1e-9)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    report = measure(args)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    agree = all(row.get("agree", True) for row in report["protocols"].values())
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
