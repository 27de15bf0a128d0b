"""The production install, its services and its processes, as docs/production.md
runs them: a virtual environment with nothing but `pip install -e .`, a PostgreSQL
database and a Redis of the test's own, gunicorn and a Celery worker with its beat.

Nothing of the test's own environment reaches the production processes: they get a minimal
base (PATH, HOME, LANG) and the documented variables, so a module that only the test extras
install, or a setting only the test environment provides, makes them fail here as it would
on a server.
"""

import os
import re
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from psycopg import sql

from evalsite.celery import ONE_MACHINE
from tests.conftest import FAST_JOB_SETTINGS
from tests.processes import (
    REPO,
    RedisServer,
    free_port,
    kill_group,
    redis_available,
    stop,
    wait_for_port,
    wait_for_workers,
)
from tests.production.install import InstallFailed, ensure_built


@pytest.fixture(scope="package")
def production_venv() -> Path:
    """.venv-prod's bin/ (tests/production/install.py), built first where it is stale."""
    try:
        return ensure_built()
    except InstallFailed as failure:
        # A production install that does not build is exactly what this test is for.
        pytest.fail(str(failure))


@pytest.fixture(scope="package")
def smoke_database():
    """A database `smoke_<random>` of its own on the server of DATABASE_URL, dropped after."""
    url = os.environ.get("DATABASE_URL", "")
    if urlsplit(url).scheme not in ("postgres", "postgresql"):
        pytest.skip("the production smoke test needs PostgreSQL: set DATABASE_URL=postgres://...")
    name = f"smoke_{secrets.token_hex(4)}"
    maintenance = maintenance_url(url)
    with psycopg.connect(maintenance, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield urlsplit(url)._replace(path=f"/{name}").geturl()
    with psycopg.connect(maintenance, autocommit=True) as connection:
        terminate_connections(connection, name)
        connection.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))


def maintenance_url(url: str) -> str:
    return urlsplit(url)._replace(path="/postgres").geturl()


def terminate_connections(connection: psycopg.Connection, database: str) -> int:
    """pg_terminate_backend for every connection to `database` but `connection` itself."""
    rows = connection.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE datname = %s AND pid <> pg_backend_pid()",
        [database],
    ).fetchall()
    return sum(1 for (terminated,) in rows if terminated)


@pytest.fixture(scope="package")
def broker(tmp_path_factory):
    """A redis-server of the test's own, so nothing else's queues are touched."""
    if not redis_available():
        pytest.skip("the production smoke test needs redis-server (apt-get install redis-server)")
    redis = RedisServer(tmp_path_factory.mktemp("redis"))
    redis.start()
    yield redis.url
    redis.kill()


def production_environment(bin_dir: Path, home: Path, database_url: str, broker_url: str) -> dict:
    """The documented variables only; DEBUG is left unset, as on a server."""
    return {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        # A home of its own: gunicorn puts its control socket in ~/.gunicorn/, which another
        # gunicorn of the same user (another run of this test) would take over.
        "HOME": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        # Plain HTTP on loopback: no TLS in front of gunicorn here.
        "SECURE_HTTPS": "false",
        # So a crashing process leaves its last words in its log.
        "PYTHONUNBUFFERED": "1",
        # Sweeps every second and a short debounce, so rankings follow within seconds.
        **FAST_JOB_SETTINGS,
    }


# The production processes, as docs/production.md starts them on a single machine: a
# worker per queue, beat embedded in the default queue's (`manage.py workers`).
WEB = "gunicorn evalsite.wsgi -w 2 -b 127.0.0.1:{port}"
WORKER = "python manage.py workers"

# The demo campaign flags HITs answered faster than its minimum and leaves them out of
# rankings; the test's crowd workers answer in milliseconds, so the minimum is lifted.
NO_MINIMUM = (
    "from annotation.models import Campaign; "
    "Campaign.objects.filter(slug='demo').update(min_seconds_per_hit=0)"
)


@dataclass
class Site:
    url: str
    database_url: str
    logs: dict[str, Path]

    def cut_database_connections(self) -> int:
        """What a database restart does to the site: every connection to it is cut."""
        with psycopg.connect(maintenance_url(self.database_url), autocommit=True) as connection:
            return terminate_connections(connection, urlsplit(self.database_url).path[1:])

    def log_tails(self, chars: int = 3000) -> str:
        return "\n".join(
            f"--- {name} ({path}) ---\n{path.read_text(errors='replace')[-chars:]}"
            for name, path in self.logs.items()
        )


def run_python(bin_dir: Path, env: dict, *arguments: str) -> None:
    """The venv's python with `arguments`, from the repository root; fails the test, with the
    command's output, if it fails."""
    command = [str(bin_dir / "python"), *arguments]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        f"{' '.join(arguments)} failed ({done.returncode}):\n"
        f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )


def manage(bin_dir: Path, env: dict, *arguments: str) -> None:
    run_python(bin_dir, env, "manage.py", *arguments)


# The first organiser, made as the production guide says (createsuperuser, here without prompts).
ORGANISER = {"username": "organiser", "password": secrets.token_urlsafe(16)}


def prepare(bin_dir: Path, env: dict) -> None:
    """What a deployment runs before starting the processes, and the demo campaign."""
    manage(bin_dir, env, "migrate", "--noinput")
    organiser = {
        "DJANGO_SUPERUSER_USERNAME": ORGANISER["username"],
        "DJANGO_SUPERUSER_PASSWORD": ORGANISER["password"],
        "DJANGO_SUPERUSER_EMAIL": "organiser@example.org",
    }
    manage(bin_dir, {**env, **organiser}, "createsuperuser", "--noinput")
    manage(bin_dir, env, "collectstatic", "--noinput")
    run_python(bin_dir, env, "-m", "ranking.engine.precompile")
    manage(bin_dir, env, "demo")
    manage(bin_dir, env, "shell", "-c", NO_MINIMUM)


def start(bin_dir: Path, command: str, env: dict, log: Path) -> subprocess.Popen:
    """A production process from the venv's bin/, in its own session, logging to `log`."""
    program, *arguments = command.split()
    with log.open("a") as out:
        return subprocess.Popen(
            [str(bin_dir / program), *arguments],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_for_sweep(log: Path, worker: subprocess.Popen, timeout: float = 30) -> None:
    """Until the worker logs a ranking sweep that beat sent and that ran to its end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if re.search(r"Task ranking\.sweep\[[^\]]+\] succeeded", log.read_text()):
            return
        if worker.poll() is not None:
            raise RuntimeError(f"the worker exited with {worker.returncode}")
        time.sleep(0.2)
    raise RuntimeError(f"no ranking.sweep succeeded in {timeout}s: is beat running?")


@pytest.fixture(scope="package")
def site(smoke_database, broker, production_venv, tmp_path_factory):
    """The site as a server runs it: migrated, static files collected, the demo campaign
    built, gunicorn and a Celery worker (with its beat) running on the smoke database."""
    bin_dir = production_venv
    env = production_environment(bin_dir, tmp_path_factory.mktemp("home"), smoke_database, broker)
    prepare(bin_dir, env)
    port = free_port()
    logs = tmp_path_factory.mktemp("production-logs")
    site = Site(
        f"http://127.0.0.1:{port}",
        smoke_database,
        {"gunicorn": logs / "gunicorn.log", "worker": logs / "worker.log"},
    )
    web = start(bin_dir, WEB.format(port=port), env, site.logs["gunicorn"])
    worker = start(bin_dir, WORKER, env, site.logs["worker"])
    try:
        try:
            wait_for_port(port, web)
            wait_for_workers(site.logs["worker"], worker, ONE_MACHINE, timeout=120)
            # "ready." says nothing of the embedded beat, which can die on its own: without
            # it no sweep runs and no ranking is ever queued.
            wait_for_sweep(site.logs["worker"], worker)
        except RuntimeError as error:
            reason = str(error).splitlines()[0]
            pytest.fail(f"the production processes did not start: {reason}\n{site.log_tails()}")
        yield site
    finally:
        for process in (web, worker):
            stop(process)
            # Pool processes and the embedded beat share the worker's session.
            kill_group(process)
