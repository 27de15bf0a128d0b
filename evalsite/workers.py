"""One machine's Celery workers, started and stopped together: a process per queue
(evalsite.celery.queue_worker_commands), for `manage.py workers` and `manage.py serve`."""

import signal
import subprocess
import time
from pathlib import Path

STOP_SECONDS = 30


def exit_on_termination() -> None:
    """Make SIGTERM and SIGHUP (kill, docker stop, systemd, a closed terminal) raise
    SystemExit, and SIGINT KeyboardInterrupt, which unwind through the caller, so that its
    `finally` stops the workers: the default actions would end this process and leave the
    workers without a parent."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _exit)
    # Ctrl-C (SIGINT) raises KeyboardInterrupt, as Python does by default, even where this
    # process was started in the background by a shell, which starts it with SIGINT
    # ignored (a later `kill -INT` would then be lost).
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(0)


class WorkerGroup:
    def __init__(self, commands: list[list[str]], cwd: Path) -> None:
        self.commands, self.cwd = commands, cwd
        self.processes: list[subprocess.Popen] = []

    def start(self) -> list[int]:
        """Start every worker; their process ids."""
        for command in self.commands:
            self.processes.append(subprocess.Popen(command, cwd=self.cwd))
        return [process.pid for process in self.processes]

    def wait(self) -> int:
        """Until one worker exits (a crash, or a signal meant for the group); its code."""
        while True:
            for process in self.processes:
                if process.poll() is not None:
                    return process.returncode
            time.sleep(0.5)

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        """SIGTERM to every worker (each finishes its current tasks), SIGKILL to those
        still running after `timeout`."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + timeout
        for process in self.processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
