"""A pytest plugin (pyproject's addopts: -p tests.parallel) that gives each pytest-xdist worker
a var/ and a Redis database of its own, so that `bin/test -n 2` runs the suite on both cores.

It must run before Django's settings are read (pytest-django reads them while pytest loads
the first conftest files), so it acts when pytest imports it, from the environment that
xdist sets in each worker process. Without xdist it changes nothing.

Why each worker needs its own: the settings put the SQLite test database, the file broker's
queues and beat's schedule under VAR_DIR; and a worker's Celery processes would take the
other worker's messages from a shared Redis database (and `purge` would drop them).
PostgreSQL needs nothing: pytest-django names each worker's test database apart.
"""

import os
from pathlib import Path
from urllib.parse import urlsplit

from xdist.scheduler import LoadFileScheduling

# Redis has 16 databases (0-15) unless configured otherwise: a worker's is the suite's own
# plus its number plus one, so gw0 of a suite on database 0 uses 1, gw1 uses 2.
REDIS_DATABASES = 16


def worker_number() -> int | None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") else None


def broker_of_worker(url: str, number: int) -> str:
    """The Redis URL with the worker's own database; any other broker URL unchanged (the file
    broker lives under VAR_DIR)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        return url
    base = int(parts.path.strip("/") or 0)
    database = base + 1 + number
    if database >= REDIS_DATABASES:
        raise RuntimeError(
            f"CELERY_BROKER_URL {url}: worker gw{number} would need Redis database {database};"
            f" use a lower database or fewer workers"
        )
    return parts._replace(path=f"/{database}").geturl()


def separate_worker_environment() -> None:
    number = worker_number()
    if number is None:
        return
    var_dir = Path(os.environ.get("VAR_DIR") or Path.cwd() / "var" / "test")
    os.environ["VAR_DIR"] = str(var_dir / f"gw{number}")
    broker = os.environ.get("CELERY_BROKER_URL")
    if broker:
        os.environ["CELERY_BROKER_URL"] = broker_of_worker(broker, number)


separate_worker_environment()


# Packages whose tests share package-scoped fixtures: each goes to one worker whole, so that
# they start once (the production site: its install, migrations, demo and processes).
ONE_WORKER_PACKAGES = ("tests/production/",)


class LoadFileOrPackageScheduling(LoadFileScheduling):
    """bin/test's --dist loadfile (whole files per worker, so that a module's Celery worker
    starts once), with the ONE_WORKER_PACKAGES whole."""

    def _split_scope(self, nodeid: str) -> str:
        for package in ONE_WORKER_PACKAGES:
            if nodeid.startswith(package):
                return package
        return super()._split_scope(nodeid)


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadfile":
        return LoadFileOrPackageScheduling(config, log)
    return None
