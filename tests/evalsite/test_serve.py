"""`manage.py serve`: the one-machine platform stops whole, and makes admin/admin only in
development."""

import io
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

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


class Site(NamedTuple):
    serve: subprocess.Popen
    port: int
    log: Path


def start_serve(folder: Path) -> Site:
    """`manage.py serve` on a free port, with a SQLite database and var/ of its own."""
    folder.mkdir()
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        "SECRET_KEY": secrets.token_urlsafe(50),
        "VAR_DIR": str(folder / "var"),
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "PYTHONUNBUFFERED": "1",
    }
    log = folder / "serve.log"
    with log.open("w") as out:
        serve = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--no-demo", f"127.0.0.1:{port}"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so that kill_group can clean up after a failure
        )
    return Site(serve, port, log)


SIGNALS = (signal.SIGTERM, signal.SIGINT)


# Slow (about 30 s: bin/serve installs nothing but starts the site and its workers): CI.
@pytest.mark.slow
def test_serve_stops_its_workers_on_sigterm_and_on_sigint(tmp_path):
    """Two sites at once, one stopped by SIGTERM (systemd, docker stop), the other by SIGINT
    (Ctrl-C in bin/serve's terminal): their starts and stops overlap their waits."""
    sites = {signum: start_serve(tmp_path / signum.name) for signum in SIGNALS}
    try:
        workers = {}
        for signum, site in sites.items():
            wait_for_port(site.port, site.serve, timeout=120)
            wait_for_workers(site.log, site.serve, ONE_MACHINE)  # a worker per queue
            workers[signum] = descendants(site.serve.pid)
            assert len(workers[signum]) >= 2 * len(ONE_MACHINE), signum.name
        for signum, site in sites.items():
            site.serve.send_signal(signum)
        for signum, site in sites.items():
            # STOP_SECONDS for the workers' warm shutdown, then a minute of slack: on CI's two
            # shared cores the site's own shutdown once took more than 15 s after it.
            assert site.serve.wait(timeout=STOP_SECONDS + 60) == 0, signum.name
            left = workers[signum]
            wait_until(
                lambda: not any(running(pid) for pid in left),  # noqa: B023
                timeout=10,
                message=f"{signum.name}: left running: {[p for p in left if running(p)]}",
            )
            assert "Stopped the Celery workers" in site.log.read_text(), signum.name
    finally:
        for site in sites.values():
            kill_group(site.serve)


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
