import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from ranking.engine import calibrated, joint, numba_cache, trueskill_kernels
from ranking.engine.calibrated import calibrated_verdict
from ranking.engine.comparisons import Comparisons
from ranking.engine.precompile import compile_kernels
from ranking.engine.trueskill_runs import bootstrap_protocol, e2e_protocol
from ranking.engine.units import UnitPairs, with_units

REPO = Path(__file__).resolve().parents[3]


def test_drop_stale_cache_clears_kernels_built_from_other_sources(tmp_path):
    (tmp_path / "protocols._e2e_runs-1.py311.nbi").write_bytes(b"index")
    (tmp_path / "protocols._e2e_runs-1.py311.1.nbc").write_bytes(b"code")
    (tmp_path / "engine-sources.sha256").write_text("digest of older sources")
    assert numba_cache.drop_stale_cache(tmp_path)
    assert not list(tmp_path.glob("*.nb?"))
    assert (tmp_path / "engine-sources.sha256").read_text() == numba_cache.sources_digest()


def test_drop_stale_cache_keeps_kernels_of_the_same_sources(tmp_path):
    (tmp_path / "engine-sources.sha256").write_text(numba_cache.sources_digest())
    kernel = tmp_path / "protocols._e2e_runs-1.py311.nbi"
    kernel.write_bytes(b"index")
    assert not numba_cache.drop_stale_cache(tmp_path)
    assert kernel.exists()


# In a process of its own: in this one, other tests may already have compiled what
# compile_kernels would miss. The engine's modules are imported there, so that a kernel it
# never reaches is seen among them.
CHECK_EVERY_KERNEL = """
import importlib, json, pkgutil
import numba
import ranking.engine
from ranking.engine.precompile import compile_kernels
for module in pkgutil.iter_modules(ranking.engine.__path__):
    if module.name != "trueskill_cuda":  # numba.cuda: compiled by its own GPU path
        importlib.import_module(f"ranking.engine.{module.name}")
compile_kernels()
kernels = {
    f"{name}.{attribute}": bool(value.signatures)
    for name, module in sorted(ranking.engine.__dict__.items())
    if type(module).__name__ == "module"
    for attribute, value in vars(module).items()
    if isinstance(value, numba.core.registry.CPUDispatcher)
    and value.__module__ == module.__name__
}
print(json.dumps(kernels))
"""


def engine_kernels() -> tuple[set[str], set[str]]:
    """From the engine's sources: the functions numba caches on disk ("module.name"), and the
    names that compiled functions call (numba compiles such a callee with its caller, and
    loads it with its caller from the cache, without a call of its own)."""
    cached, called = set(), set()
    for path in numba_cache.ENGINE_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            decorators = [ast.unparse(decorator) for decorator in node.decorator_list]
            if not any("jit" in decorator for decorator in decorators):
                continue
            if any("cache=True" in decorator for decorator in decorators):
                cached.add(f"{path.stem}.{node.name}")
            called |= {
                call.func.id
                for call in ast.walk(node)
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            }
    return cached, called


def test_compile_kernels_reaches_every_cached_kernel_of_the_engine():
    """bin/test (and an install, docs/production.md) runs ranking.engine.precompile so that
    no later process compiles: it must reach every kernel that Python calls (the kernels
    those call come with them)."""
    done = subprocess.run(
        [sys.executable, "-c", CHECK_EVERY_KERNEL],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    kernels = json.loads(done.stdout.splitlines()[-1])
    cached, callees = engine_kernels()
    assert set(kernels) == cached
    entries = {
        name: compiled for name, compiled in kernels.items() if name.split(".")[1] not in callees
    }
    assert {"trueskill_kernels._e2e_runs", "calibrated._permuted_runs"} <= set(entries)
    assert [name for name, compiled in entries.items() if not compiled] == []


def test_rankings_run_the_signatures_that_compile_kernels_compiled():
    """What precompile compiles is what rankings run: the engine's dataclasses normalise
    their arrays' dtypes, so a ranking from other arrays (lists, int16, a Generator as seed,
    another number of systems) compiles nothing more."""
    compile_kernels()
    entries = [
        trueskill_kernels._e2e_runs,
        trueskill_kernels._bootstrap_runs,
        calibrated._permuted_runs,
        joint._null_group_statistics,
    ]
    compiled = [len(kernel.signatures) for kernel in entries]
    assert all(compiled), compiled
    comparisons = Comparisons(
        winner=[1, 0, 2, 3, 3],
        loser=np.array([0, 2, 1, 0, 1], dtype=np.int16),
        draw=[0, 1, 0, 0, 1],
        unit=[5, 5, 9, 9, 2],
    )
    e2e_protocol(comparisons, 4, runs=3, seed=np.random.default_rng(1))
    bootstrap_protocol(comparisons, 4, runs=3, seed=7)
    pairs = UnitPairs.of(with_units(comparisons))
    calibrated_verdict(pairs, 4, comparisons.per_system(4), permutations=3, seed=2)
    assert [len(kernel.signatures) for kernel in entries] == compiled
