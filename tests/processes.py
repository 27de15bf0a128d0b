"""Real processes for the tests that need them: Celery workers, a Redis of the test's own,
and ways to kill them as production sees them die."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from evalsite.celery import ONE_MACHINE, worker_command

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"process {process.args[0]} exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing answered on port {port} in {timeout}s")


def wait_for_line(log: Path, text: str, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text():
            return
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[:4]} exited:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    raise RuntimeError(
        f"{process.args[:4]} did not start in {timeout}s:\n{log.read_text()[-3000:]}"
    )


def stop(process: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM, then SIGKILL to the whole process group if it does not go."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)


def kill_group(process: subprocess.Popen) -> None:
    """kill -9 of a process and everything it started (it runs in its own session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=20)


class RedisServer:
    """A redis-server of the test's own on a free port, so killing it harms nobody."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
        ]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        wait_for_port(self.port, self.process)

    def kill(self) -> None:
        if self.process is not None:
            kill_group(self.process)


def redis_available() -> bool:
    return shutil.which("redis-server") is not None


def start_worker(env: dict, log: Path, *options: str) -> subprocess.Popen:
    """A `celery worker` with embedded beat, in its own session so that it can be killed
    whole; returns once it says it is ready."""
    with log.open("a") as out:
        worker = subprocess.Popen(
            worker_command("--without-heartbeat", "--without-mingle", "--without-gossip", *options),
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_for_line(log, "ready.", worker, timeout=90)
    return worker


def wait_for_workers(log: Path, process: subprocess.Popen, queues, timeout: float = 120) -> None:
    """Until the worker of each queue (named <queue>@host) says it is ready."""
    deadline = time.monotonic() + timeout
    while not all(f"{queue}@" in ready_lines(log) for queue in queues):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"workers not ready ({queues}):\n{log.read_text()[-3000:]}")
        time.sleep(0.2)


def ready_lines(log: Path) -> str:
    return "\n".join(line for line in log.read_text().splitlines() if line.endswith(" ready."))


def start_worker_group(
    env: dict, log: Path, *options: str, queues=tuple(ONE_MACHINE)
) -> subprocess.Popen:
    """`manage.py workers`, one machine's workers as docs/production.md starts them (a
    process per queue, beat in the default queue's), in its own session so that it can be
    killed whole; returns once every worker says it is ready."""
    with log.open("a") as out:
        group = subprocess.Popen(
            [sys.executable, "manage.py", "workers", *options],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_for_workers(log, group, queues)
    return group
