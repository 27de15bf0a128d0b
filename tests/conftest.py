"""Fixtures shared by the whole suite: the E2E data in ../shared, a real Celery worker, and
the people of the view tests (tests/world.py)."""

import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

from evalsite.celery import app
from ranking.metrics import coco
from tests.client import HttpsClient
from tests.processes import start_worker, stop
from tests.production.install import build_in_background
from tests.receivers import Answering, SlowReceiver

# Helpers that assert, imported by tests after this: their failures explained as a test's.
pytest.register_assert_rewrite("tests.judging_helpers", "tests.browser.judging_pages")

# The people of the view tests: organiser, worker, stranger, ... (see tests/world.py).
pytest_plugins = ["tests.world", "tests.chromium"]

REPO = Path(__file__).resolve().parent.parent
E2E_DATA = REPO.parent / "shared" / "data" / "e2e"


def pytest_addoption(parser):
    parser.addoption(
        "--slow", action="store_true", help="also run the tests marked slow (.ci/run does)"
    )
    parser.addoption(
        "--research",
        action="store_true",
        help="also run the tests of research/'s studies (tests/research: minutes; CI does not)",
    )


def pytest_collection_modifyitems(config, items):
    """Tests marked slow (minutes on this 2-core machine) are skipped, saying how to run them,
    unless --slow is given: CI runs them, a newcomer's first run need not. Tests marked
    research (tests/research) run only with --research. Tests marked postgres skip on any
    other database, saying where they run."""
    slow = pytest.mark.skip(reason="slow: CI runs it (.ci/run); bin/test --slow runs it here")
    research = pytest.mark.skip(reason=RESEARCH_ONLY)
    postgres = pytest.mark.skip(reason=POSTGRES_ONLY)
    on_postgres = connection.vendor == "postgresql"
    for item in items:
        if "slow" in item.keywords and not config.getoption("--slow"):
            item.add_marker(slow)
        if item.get_closest_marker("research") and not config.getoption("--research"):
            item.add_marker(research)
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(postgres)
    items[:] = heaviest_files_first(items, config.getoption("--slow"))
    if config.getoption("--slow") and on_postgres and first_worker():
        if any(item.get_closest_marker("production") for item in items):
            build_in_background(Path(settings.VAR_DIR) / "production-install.log")


# What a test file costs: measured on this 2-core machine (the sum of its tests' wall times in
# CI's run, 2026-11-28) for the costliest, where the run includes their slow tests; else,
# roughly, by its tests' marks (seconds): tests that start the production install or
# processes, Celery workers or Chromium cost more than the rest.
MEASURED_SECONDS = {
    "tests/evalsite/test_faults.py": 80,
    "tests/browser/test_organiser_journey.py": 30,  # 40 MRs since 2026-12-02
    "tests/evalsite/test_one_machine_workers.py": 39,
    "tests/evalsite/test_readme.py": 26,
    "tests/evalsite/test_serve.py": 25,
    "tests/production/test_smoke.py": 24,
    "tests/browser/test_hit_page.py": 23,
    "tests/ranking/test_bundle.py": 23,
    "tests/ranking/automatic_metrics/test_commands.py": 22,
    "tests/annotation/test_migrations.py": 17,
    "tests/browser/test_published_pages.py": 15,
    "tests/browser/test_attention_checks.py": 15,
    "tests/ranking/test_commands.py": 13,
    "tests/browser/test_hit_form.py": 12,
    "tests/annotation/test_published.py": 12,
    "tests/browser/test_worker_journey.py": 10,
    "tests/production/test_api_notebook.py": 9,  # with test_smoke.py's site (tests/parallel.py)
}
MARK_SECONDS = (("production", 40.0), ("slow", 30.0), ("celery", 5.0), ("browser", 2.0))


def heaviest_files_first(items: list, slow_runs: bool) -> list:
    """The items, whole files in decreasing cost. bin/test hands pytest-xdist whole files in
    this order (--dist loadfile --no-loadscope-reorder): the longest first, so that no worker
    is left with a minute of work while the other has finished (xdist's own order, the most
    tests first, put the six fault tests and the production install last)."""
    cost: dict[str, float] = {}
    skipped_slow: set[str] = set()
    installs: set[str] = set()
    for item in items:
        path = file_of(item)
        cost[path] = cost.get(path, 0.0) + marked_seconds(item, slow_runs)
        if item.get_closest_marker("slow") and not slow_runs:
            skipped_slow.add(path)
        if item.get_closest_marker("production"):
            installs.add(path)
    for path in cost:
        if path in MEASURED_SECONDS and path not in skipped_slow:
            cost[path] = MEASURED_SECONDS[path]
    files = sorted(cost, key=lambda path: -cost[path])
    # The production install builds in the background from the start (a minute): its tests
    # come after the two costliest files, so that they find it built instead of waiting.
    others = [path for path in files if path not in installs]
    files = others[:2] + [path for path in files if path in installs] + others[2:]
    place = {path: index for index, path in enumerate(files)}
    return sorted(items, key=lambda item: place[file_of(item)])


def marked_seconds(item, slow_runs: bool) -> float:
    seconds = 0.1
    for mark, mark_seconds in MARK_SECONDS:
        if item.get_closest_marker(mark) and (mark != "slow" or slow_runs):
            seconds = max(seconds, mark_seconds)
    return seconds


def file_of(item) -> str:
    return item.nodeid.split("::")[0]


def first_worker() -> bool:
    """Whether this is pytest-xdist's first worker, or pytest without xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0"


# research/ holds the studies behind docs/research-*.md (simulators, design searches), not the
# product: their tests replay whole campaigns for minutes, so they run when asked, as the
# studies do, and the suite stays within its five minutes.
RESEARCH_ONLY = "a study of research/: bin/test --research runs it (CI does not)"

POSTGRES_ONLY = (
    "needs PostgreSQL: bin/test runs it on PostgreSQL after this run where one answers on "
    "127.0.0.1:5432, CI on its own; elsewhere set DATABASE_URL=postgres://..."
)


def pytest_collection_finish(session):
    """Where bin/test asks (POSTGRES_LATER names a file), the selected tests that skip for
    want of PostgreSQL are written there, one node id a line, for it to run on PostgreSQL."""
    later = os.environ.get("POSTGRES_LATER")
    if not later or connection.vendor == "postgresql":
        return
    ids = sorted(item.nodeid for item in session.items if "postgres" in item.keywords)
    written = Path(f"{later}.{os.getpid()}")  # xdist's workers each collect the same set
    written.write_text("".join(f"{nodeid}\n" for nodeid in ids))
    written.replace(later)


@pytest.fixture(scope="session")
def e2e_data() -> Path:
    """The published E2E files; tests that need them skip where ../shared is absent."""
    if not (E2E_DATA / "human_ratings" / "quality.csv").is_file():
        pytest.skip(f"E2E data not found at {E2E_DATA} (../shared is absent on this checkout)")
    return E2E_DATA


def shared_dataset(name: str, marker: str) -> Path:
    folder = REPO.parent / "shared" / "data" / name
    if not (folder / marker).exists():
        pytest.skip(f"{name} data not found at {folder} (../shared is absent on this checkout)")
    return folder


@pytest.fixture(scope="session")
def logicnlg_data() -> Path:
    return shared_dataset("logicnlg", "data/test_lm.json")


@pytest.fixture(scope="session")
def rotowire_data() -> Path:
    return shared_dataset("rotowire", "games")


@pytest.fixture(scope="session")
def webnlg_data() -> Path:
    return shared_dataset("webnlg2020", "inputs/en_sampled_triples.json")


@pytest.fixture(scope="session", autouse=True)
def fast_password_hashing():
    """MD5 instead of production's PBKDF2 for the users the tests make: each hash otherwise
    takes a second or more on a small machine. Only this process's tests: the production
    smoke test (tests/production) runs the installed site, with its own settings and
    hasher, in processes of its own."""
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(scope="session", autouse=True)
def one_meteor_process():
    """The tests that score METEOR share one METEOR process, started by the first of them:
    each start loads its paraphrase table, up to a minute on a loaded machine."""
    with coco.kept_meteor():
        yield


@pytest.fixture(scope="session", autouse=True)
def few_null_permutations():
    """A published view's permutation figure (ranking/permutation_check.py) from at most 10
    permutations, not production's 100, for the runs the tests rank in this process: each
    permutation ranks the campaign again with the run's repetitions, and the figure's count
    changes nothing the tests check but its own value (a file of round trips through every
    view took 46 s with 100 on this loaded machine, 10 s with 10). The figure itself is
    tested in tests/ranking/test_permutation_check.py, tests of its display set their own
    count, and the Celery workers the tests start keep production's."""
    with override_settings(RANKING_NULL_CHECK_PERMUTATIONS=10):
        yield


@pytest.fixture
def brief_null_check():
    """A published view's permutation figure (ranking/permutation_check.py) from one
    permutation (the check always ranks at least one), not production's 15 seconds of them:
    for the tests that rank E2E's 14,895 judgments in this process for what else the run
    stores (each permutation of a 200-run E2E ranking is another second). The figure itself
    is tested in tests/ranking/test_permutation_check.py; the Celery workers the tests start
    keep 15 seconds."""
    with override_settings(RANKING_NULL_CHECK_SECONDS=0):
        yield


@pytest.fixture(autouse=True)
def own_rate_limits():
    """Each test counts its requests apart (annotation/rate_limits.py): the suite's requests
    all come from 127.0.0.1, and one test's would otherwise use up the next one's limits.
    (Not through pytest-django's `settings`: tests parametrized by a `settings` argument
    would shadow it.)"""
    with override_settings(RATE_LIMIT_NAMESPACE=f"{uuid.uuid4().hex[:12]}:"):
        yield


@pytest.fixture
def serve():
    """`serve(answer)` starts an `Answering` server; each is shut when the test ends."""
    yield from _closed_after(Answering)


@pytest.fixture
def slow():
    """`slow(mode, interval)` starts a `SlowReceiver`; each is closed when the test ends."""
    yield from _closed_after(SlowReceiver)


def _closed_after(start):
    started = []

    def started_one(*args, **kwargs):
        started.append(start(*args, **kwargs))
        return started[-1]

    yield started_one
    for server in started:
        server.close()


@pytest.fixture
def client() -> HttpsClient:
    """pytest-django's `client`, over HTTPS (see tests/client.py)."""
    return HttpsClient()


def database_url_for(db: dict) -> str:
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


# A worker's beat sweeps every second, and a job is taken over 3 s after its worker went
# silent, so the tests that rely on them wait seconds, not minutes.
FAST_JOB_SETTINGS = {
    "JOB_SWEEP_SECONDS": "1",
    "JOB_HEARTBEAT_SECONDS": "1",
    "JOB_STALE_SECONDS": "3",
    "JOB_RESEND_SECONDS": "3",
    "RANKING_DEBOUNCE_SECONDS": "1",
}


def worker_environment(**overrides: str) -> dict:
    """The environment of a worker process on the test database."""
    db = dict(settings.DATABASES["default"])
    return dict(
        os.environ,
        DATABASE_URL=database_url_for(db),
        PYTHONUNBUFFERED="1",
        **FAST_JOB_SETTINGS,
        **overrides,
    )


@pytest.fixture(scope="module")
def celery_worker_of_module(django_db_setup, django_db_blocker, tmp_path_factory):
    """A real `celery worker` process (with its beat) on the test database, consuming every
    queue, for the tests of one module: its sweep acts on every row it sees, so modules
    must not share one."""
    with django_db_blocker.unblock():
        env = worker_environment()
    app.control.purge()
    log = tmp_path_factory.mktemp("celery") / "worker.log"
    worker = start_worker(env, log, "--pool=solo")
    yield worker, log
    os.kill(worker.pid, signal.SIGCONT)
    stop(worker)


@pytest.fixture
def celery_worker_process(celery_worker_of_module, transactional_db):
    """The module's worker, running during the test; its log's path.

    Tests that use it commit their data (transactional_db): the worker is another process
    with its own connection. The worker outlives the test, and its sweep may be writing
    when the test's tables are emptied: the flush's TRUNCATE and those writes deadlocked in
    CI. So the worker is paused (SIGSTOP) at a moment it holds no transaction before the
    flush, and resumed when the next test that uses it starts."""
    worker, log = celery_worker_of_module
    os.kill(worker.pid, signal.SIGCONT)
    yield log
    pause_between_transactions(worker)


def pause_between_transactions(worker, timeout: float = 120, whole_group: bool = False) -> None:
    """SIGSTOP `worker` (with `whole_group`, every process of its process group) when no
    other connection to the test database is inside a statement or a transaction
    (PostgreSQL; SQLite's file lock serialises the flush)."""
    if connection.vendor != "postgresql":
        return
    send = os.killpg if whole_group else os.kill
    deadline = time.monotonic() + timeout
    while True:
        send(worker.pid, signal.SIGSTOP)
        if not other_connections_busy():
            return
        send(worker.pid, signal.SIGCONT)
        if time.monotonic() > deadline:
            pytest.fail("the worker never left its transaction before the flush")
        time.sleep(0.1)


def other_connections_busy() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            " AND state <> 'idle'"
        )
        return cursor.fetchone()[0] > 0


def wait_until(condition, timeout: float = 60, interval: float = 0.2, message: str = ""):
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(message or f"condition not met in {timeout}s")
