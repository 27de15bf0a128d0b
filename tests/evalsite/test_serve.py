"""`manage.py serve`: the one-machine platform stops whole, and makes admin/admin only in
development."""

import io
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import get_commands
from django.urls import reverse

from evalsite.celery import ONE_MACHINE
from evalsite.management.commands.serve import Command
from evalsite.workers import STOP_SECONDS
from tests.conftest import wait_until
from tests.processes import REPO, free_port, kill_group, wait_for_port, wait_for_workers

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (command) state ppid ...": the command may hold spaces and parentheses.
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (parent := parent_of(int(entry.name))) is not None:
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def running(pid: int) -> bool:
    """Alive and not a zombie (a dead child not yet collected)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# Slow (about 30 s each: bin/serve installs nothing but starts the site and its workers): CI.
@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_stops_its_worker_on_a_signal(tmp_path, signum):
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "SECRET_KEY": secrets.token_urlsafe(50),
        "VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "PYTHONUNBUFFERED": "1",
    }
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        serve = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--no-demo", f"127.0.0.1:{port}"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so that kill_group can clean up after a failure
        )
    try:
        wait_for_port(port, serve, timeout=120)
        wait_for_workers(log, serve, ONE_MACHINE)  # a worker per queue
        worker_and_children = descendants(serve.pid)
        assert len(worker_and_children) >= 2 * len(ONE_MACHINE), "a worker per queue"

        serve.send_signal(signum)
        # STOP_SECONDS for the workers' warm shutdown, then a minute of slack: on CI's two
        # shared cores the site's own shutdown once took more than 15 s after it.
        assert serve.wait(timeout=STOP_SECONDS + 60) == 0
        wait_until(
            lambda: not any(running(pid) for pid in worker_and_children),
            timeout=10,
            message=f"left running: {[p for p in worker_and_children if running(p)]}",
        )
        assert "Stopped the Celery workers" in log.read_text()
    finally:
        kill_group(serve)


@pytest.mark.django_db
def test_serve_makes_the_admin_account_only_under_debug(settings):
    users = get_user_model().objects
    settings.DEBUG = False
    Command().ensure_organiser()
    assert not users.exists()
    settings.DEBUG = True
    Command().ensure_organiser()
    assert users.get().username == "admin"


def test_serve_is_a_project_command():
    assert get_commands()["serve"] == "evalsite"


def test_serve_prints_the_demo_start_pages_by_their_urls():
    out = io.StringIO()
    Command(stdout=out).print_start_pages("127.0.0.1:8000")
    printed = out.getvalue()
    entry = reverse("annotation:entry", args=["demo", "quality"])
    assert f"http://127.0.0.1:8000{entry}?PROLIFIC_PID=try-me" in printed
    assert f"http://127.0.0.1:8000{reverse('admin:index')} " in printed
    assert "`manage.py generate demo e2e-template`" in printed
