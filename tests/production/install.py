"""The production install the smoke tests run: .venv-prod at the repository root, holding
only what docs/production.md installs. Built under a lock, reused while pyproject.toml and the
install command are unchanged.

`python -m tests.production.install` builds it where it is missing or stale: the suite starts
that in the background when it has production tests to run (tests/conftest.py), so that the
minute of pip overlaps the tests before them instead of adding to the run."""

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRODUCTION_VENV = REPO / ".venv-prod"
# What docs/production.md installs: the project alone, gunicorn included.
INSTALL = ["-e", "."]
STAMP = PRODUCTION_VENV / ".installed-sha256"
LOCK = REPO / ".venv-prod.lock"


class InstallFailed(Exception):
    pass


def install_fingerprint() -> str:
    digest = hashlib.sha256((REPO / "pyproject.toml").read_bytes())
    digest.update(" ".join(INSTALL).encode())
    return digest.hexdigest()


def pip_environment() -> dict:
    # pip needs the machine's own configuration (index, proxy, cache), but nothing that
    # would make the test venv's packages visible to the new interpreter.
    leaks = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
    return {name: value for name, value in os.environ.items() if name not in leaks}


def build() -> None:
    # A fresh venv, never an upgrade of the old one: a dependency removed from pyproject
    # must be missing here as it would be on a new server.
    shutil.rmtree(PRODUCTION_VENV, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(PRODUCTION_VENV)],
        [str(PRODUCTION_VENV / "bin" / "python"), "-m", "pip", "install", "-q", *INSTALL],
    ]
    for command in steps:
        done = subprocess.run(
            command, cwd=REPO, env=pip_environment(), capture_output=True, text=True, timeout=900
        )
        if done.returncode != 0:
            raise InstallFailed(
                f"production install failed: {' '.join(command)}\n"
                f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
    STAMP.write_text(install_fingerprint())


def ensure_built() -> Path:
    """The production venv's bin/, built first where it is missing or stale. The lock holds
    while it builds: pytest-xdist's workers and the background build may ask at once."""
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fresh = STAMP.is_file() and STAMP.read_text() == install_fingerprint()
        if not fresh or not (PRODUCTION_VENV / "bin" / "python").is_file():
            build()
    return PRODUCTION_VENV / "bin"


def build_in_background(log: Path) -> subprocess.Popen:
    """Start ensure_built in a process of its own (a failed build is built again, and its
    failure shown, by the test that needs it)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.production.install"],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


if __name__ == "__main__":
    try:
        ensure_built()
    except InstallFailed as failure:
        sys.exit(str(failure))
