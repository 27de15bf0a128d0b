"""The GPU path of the TrueSkill runs, without a GPU: under numba's CUDA simulator, compiled
for the CUDA target to PTX where a CUDA toolkit is installed, and its fallback to the CPU.

The simulator is chosen when numba.cuda is first imported (NUMBA_ENABLE_CUDASIM) and must
run the shared njit functions as Python (NUMBA_DISABLE_JIT), so it runs in a process of its
own; this one compares with the compiled CPU path.
"""

import glob
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ranking.engine import trueskill_runs
from ranking.engine.trueskill_runs import bootstrap_protocol, e2e_protocol, gpu
from tests.processes import REPO
from tests.ranking.engine.test_trueskill_runs import make_comparisons

# 5 systems, 200 comparisons, 8 runs: the simulator runs each thread as Python.
SIMULATED = """
import sys
import numpy as np
from ranking.engine import trueskill_runs
from tests.ranking.engine.test_trueskill_runs import make_comparisons

def cpu_runs(*args):
    raise AssertionError("the CPU's runs were called")

trueskill_runs._e2e_runs = trueskill_runs._bootstrap_runs = cpu_runs
comparisons = make_comparisons(n_systems=5, n=200, seed=5)
with trueskill_runs.gpu("auto"):
    e2e = trueskill_runs.e2e_protocol(comparisons, 5, 8, seed=7)
    bootstrap = trueskill_runs.bootstrap_protocol(comparisons, 5, 8, seed=7, chunk_runs=3)
np.savez(sys.argv[1], e2e_mu=e2e.mu, e2e_sigma=e2e.sigma, bootstrap_mu=bootstrap.mu,
         bootstrap_sigma=bootstrap.sigma)
"""


def run_python(code: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code, *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_simulated_gpu_runs_equal_the_cpu_runs(tmp_path):
    out = tmp_path / "simulated.npz"
    done = run_python(SIMULATED, str(out), NUMBA_ENABLE_CUDASIM="1", NUMBA_DISABLE_JIT="1")
    assert done.returncode == 0, done.stderr
    simulated = np.load(out)
    comparisons = make_comparisons(n_systems=5, n=200, seed=5)
    e2e = e2e_protocol(comparisons, 5, 8, seed=7)
    bootstrap = bootstrap_protocol(comparisons, 5, 8, seed=7)
    # On the simulator the math library is the CPU's, so equal to the bit; a device's
    # exp and erfc may differ by an ulp (trueskill_cuda.py).
    np.testing.assert_array_equal(simulated["e2e_mu"], e2e.mu)
    np.testing.assert_array_equal(simulated["e2e_sigma"], e2e.sigma)
    np.testing.assert_array_equal(simulated["bootstrap_mu"], bootstrap.mu)
    np.testing.assert_array_equal(simulated["bootstrap_sigma"], bootstrap.sigma)


def nvvm_home() -> str | None:
    if os.environ.get("CUDA_HOME"):
        return os.environ["CUDA_HOME"]
    found = sorted(glob.glob("/usr/local/cuda*/nvvm/libdevice"))
    return str(Path(found[-1]).parents[1]) if found else None


# Compiling a device function asks the current device for its compute capability; there is
# none here, so the check names one (an H100's).
TO_PTX = """
import types
import numba
import numba.cuda.dispatcher
numba.cuda.dispatcher.get_current_device = lambda: types.SimpleNamespace(
    compute_capability=(9, 0)
)
from numba import cuda
from ranking.engine import trueskill_cuda
from ranking.engine.trueskill_kernels import KernelParams

k = numba.typeof(KernelParams(0.0, 0.25, 1.0, 0.0, 0.1, False))
u8, f8, i8, i4, b1 = numba.uint64, numba.float64, numba.int64, numba.int32, numba.boolean
runs = (u8[::1], f8[:, ::1], f8[:, ::1], b1[::1])
e2e = (*runs, i8[:, ::1], f8[:, ::1], i8[:, ::1], i4[:, ::1], b1[::1], i8, f8[:, :, ::1], k)
bootstrap = (*runs, i4[:, ::1], i8[::1], k)
for kernel, signature in ((trueskill_cuda._e2e_runs, e2e),
                          (trueskill_cuda._bootstrap_runs, bootstrap)):
    ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
    assert ".entry" in ptx
"""


def test_gpu_kernels_compile_for_the_cuda_target():
    """The simulator runs Python, so it accepts what the CUDA target would refuse (the
    builtins min and max, for one); NVVM, from a CUDA toolkit, says what a device would."""
    home = nvvm_home()
    if home is None:
        pytest.skip("no CUDA toolkit (NVVM) found")
    done = run_python(TO_PTX, CUDA_HOME=home)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("protocol", [e2e_protocol, bootstrap_protocol])
def test_gpu_auto_without_a_device_runs_on_the_cpu(protocol, monkeypatch):
    monkeypatch.setattr(trueskill_runs, "gpu_available", lambda: False)
    comparisons = make_comparisons(n=300)
    with gpu("auto"):
        placed = protocol(comparisons, 6, 4, seed=3)
    assert np.array_equal(placed.mu, protocol(comparisons, 6, 4, seed=3).mu)


def test_gpu_off_does_not_look_for_a_device(monkeypatch):
    def look() -> bool:
        raise AssertionError("looked for a device")

    monkeypatch.setattr(trueskill_runs, "gpu_available", look)
    with gpu("off"):
        e2e_protocol(make_comparisons(n=300), 6, 2, seed=3)


@pytest.mark.parametrize("failing", ["start", "run"])
def test_gpu_failure_falls_back_to_the_cpu_with_a_warning(failing, monkeypatch, caplog):
    def fail(*args):
        raise RuntimeError("no CUDA driver")

    def start(*args):
        if failing == "start":
            fail()
        return fail

    from ranking.engine import trueskill_cuda  # noqa: PLC0415 - as the engine loads it

    monkeypatch.setattr(trueskill_runs, "gpu_available", lambda: True)
    monkeypatch.setattr(trueskill_cuda, "e2e_kernel", start)
    monkeypatch.setattr(trueskill_cuda, "device_name", lambda: "a test device")
    comparisons = make_comparisons(n=300)
    with caplog.at_level(logging.WARNING, logger=trueskill_runs.__name__), gpu("auto"):
        placed = e2e_protocol(comparisons, 6, 4, seed=3)
    assert np.array_equal(placed.mu, e2e_protocol(comparisons, 6, 4, seed=3).mu)
    assert "TrueSkill runs on the CPU: the GPU path failed" in caplog.text


def test_gpu_mode_must_be_known():
    with pytest.raises(ValueError, match="auto, off"), gpu("on"):
        pass
