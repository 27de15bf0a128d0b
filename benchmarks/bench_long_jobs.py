"""How long a ranking waits on one machine while two campaigns' metric runs are going: the
single worker the guide documented before (`celery worker -B -Q <every queue>
--concurrency 2`) against `manage.py workers` (a worker per queue), on PostgreSQL.

    .venv/bin/python benchmarks/bench_long_jobs.py
    .venv/bin/python benchmarks/bench_long_jobs.py --reuse --rounds 3 --setups workers

It builds, in a database of its own (bench_long_jobs, kept, so that --reuse skips the build),
two campaigns of E2E's test set with the 21 systems' outputs (630 items, 13,230 outputs
each: the metric runs the red team started) and a small open campaign to rank (3 systems,
40 items). For each setup it starts a Redis of its own and the workers, with the sweep every
second and no debounce, lets the first ranking load the compiled kernels, then measures the
seconds from a submitted HIT (through annotation.handout.flow, as the annotators' pages
submit) to the finished ranking that counts it: ROUNDS times with nothing else running,
then ROUNDS times after metric runs of both E2E campaigns were queued, noting how many of
them were unfinished when each ranking finished (a ranking not done within --timeout is
reported as more than that). The metric runs are stopped with their workers and deleted
before the next setup.
"""

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import django
import psycopg

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SITE_ENV = {
    "SECRET_KEY": "bench-long-jobs-only-" + "x" * 40,
    "DJANGO_SETTINGS_MODULE": "evalsite.settings",
}
DATABASE = "bench_long_jobs"
LONG_CAMPAIGNS = ("e2e-a", "e2e-b")
SETUPS = ("single", "workers")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="rankings measured per case")
    parser.add_argument("--setups", nargs="+", choices=SETUPS, default=list(SETUPS))
    parser.add_argument("--e2e", type=Path, default=REPO.parent / "shared" / "data" / "e2e")
    parser.add_argument("--reuse", action="store_true", help="use the database as left")
    parser.add_argument(
        "--timeout", type=float, default=600, help="seconds a ranking is waited for"
    )
    parser.add_argument(
        "--postgres",
        default="postgres://postgres@127.0.0.1:5432",
        help="a server where the benchmark may create its database",
    )
    return parser.parse_args()


ARGS = parse_args()
os.environ.update(SITE_ENV, DATABASE_URL=f"{ARGS.postgres}/{DATABASE}")
os.environ.pop("DEBUG", None)
os.environ.pop("CELERY_BROKER_URL", None)
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from annotation.handout import flow  # noqa: E402
from annotation.handout.shown import Answer  # noqa: E402
from annotation.models import Annotator, Campaign, CampaignCriterion, Item, Output  # noqa: E402
from evalsite.celery import ONE_MACHINE  # noqa: E402
from ranking.automatic_metrics.models import MetricRun  # noqa: E402
from ranking.models import RankingRun  # noqa: E402
from tests.processes import (  # noqa: E402
    RedisServer,
    kill_group,
    start_worker,
    start_worker_group,
)

RANKED = "bench-rank"
SCORES = {"sys0": 300, "sys1": 200, "sys2": 100}


def main() -> None:
    # SIGTERM unwinds as an exception, so that the workers and Redis are stopped.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    if not (ARGS.reuse and database_ready()):
        recreate_database()
        build()
    figures = {setup: measure(setup) for setup in ARGS.setups}
    print("\nseconds from a submitted HIT to its ranking, one machine:")
    for setup, (alone, with_long, memory) in figures.items():
        print(f"  {SETUP_NAMES[setup]} ({memory}):")
        print(f"    alone {spread(alone)}\n    with two metric runs {spread(with_long)}")


SETUP_NAMES = {
    "single": "celery worker -B -Q <every queue> --concurrency 2",
    "workers": "manage.py workers (" + ", ".join(f"{q} x{n}" for q, n in ONE_MACHINE.items()) + ")",
}


def spread(rounds: list[tuple[float, int]]) -> str:
    seconds = ", ".join(f"{s:.1f}" if s < float("inf") else f">{ARGS.timeout:g}" for s, _ in rounds)
    unfinished = ", ".join(str(u) for _, u in rounds)
    return f"{seconds} s (metric runs unfinished at the time: {unfinished})"


# The database -------------------------------------------------------------------------------


def admin_connection() -> psycopg.Connection:
    return psycopg.connect(f"{ARGS.postgres}/postgres", autocommit=True)


def database_ready() -> bool:
    with admin_connection() as admin:
        found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
        if not found.fetchone():
            return False
    return Campaign.objects.filter(slug=RANKED).exists()


def recreate_database() -> None:
    with admin_connection() as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")


def build() -> None:
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    for slug in LONG_CAMPAIGNS:
        items = str(ARGS.e2e / "testset_w_refs.csv")
        call_command("import_items", slug, items, "--create-campaign")
        for path in sorted((ARGS.e2e / "outputs").glob("*.tsv")):
            call_command("import_outputs", slug, path.stem, str(path), "--create-system")
    campaign = Campaign.objects.create(
        slug=RANKED,
        name="Ranked while long jobs run",
        status=Campaign.Status.OPEN,
        outputs_per_hit=3,
        min_seconds_per_hit=0,
        standard_text="The Vaults is a pub.",
        standard_input={"attributes": [["name", "The Vaults"], ["eatType", "pub"]]},
    )
    CampaignCriterion.objects.create(campaign=campaign, name="quality", comprehension_check=False)
    systems = [campaign.systems.create(name=name, key=name) for name in SCORES]
    for n in range(40):
        attributes = [["name", f"Place {n}"], ["eatType", "pub"]]
        item = Item.objects.create(
            campaign=campaign,
            external_id=str(n),
            input_kind="mr",
            input_data={"attributes": attributes},
            input_key=f"place {n}",
            references=[f"Place {n} is a pub."],
        )
        Output.objects.bulk_create(
            Output(item=item, system=system, text=f"{system.name} {n}") for system in systems
        )
    outputs = Output.objects.filter(item__campaign__slug__in=LONG_CAMPAIGNS).count()
    print(f"built in {time.perf_counter() - started:.0f} s: {outputs:,} outputs to score")


# Measuring ----------------------------------------------------------------------------------


def measure(setup: str) -> tuple[list[tuple[float, int]], list[tuple[float, int]], str]:
    MetricRun.objects.all().delete()
    work = Path(tempfile.mkdtemp(prefix="bench-long-jobs-"))
    redis = RedisServer(work)
    redis.start()
    env = {
        **os.environ,
        "VAR_DIR": str(work / "var"),
        "CELERY_BROKER_URL": redis.url,
        "PYTHONPATH": str(REPO),
        "JOB_SWEEP_SECONDS": "1",
        "RANKING_DEBOUNCE_SECONDS": "0",
    }
    log = work / "workers.log"
    if setup == "single":
        workers = start_worker(env, log, "--concurrency=2")
    else:
        workers = start_worker_group(env, log)
    try:
        ranking_latency()  # loads the worker's compiled kernels
        memory = memory_of(workers.pid)
        alone = [ranking_latency() for _ in range(ARGS.rounds)]
        for slug in LONG_CAMPAIGNS:  # rows only: the sweep sends them, as after a click
            MetricRun.objects.create(campaign=Campaign.objects.get(slug=slug))
        wait_for(lambda: MetricRun.objects.filter(status="running").exists(), "no metric run")
        with_long = []
        for _ in range(ARGS.rounds):
            with_long.append(ranking_latency())
            if with_long[-1][0] == float("inf"):
                break  # the next would wait as long
    finally:
        kill_group(workers)
        redis.kill()
        connection.close()
    print(f"{setup} ({memory}): alone {spread(alone)}; with two metric runs {spread(with_long)}")
    return alone, with_long, memory


def memory_of(root: int) -> str:
    """The worker processes (mains, pools, beat) and the sum of their proportional sets
    (Pss: a page shared since the fork counted once over its sharers), while idle."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    kib = 0
    for pid in tree:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        kib += sum(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
    return f"{len(tree)} processes, {kib / 1024:.0f} MiB Pss"


def ranking_latency() -> tuple[float, int]:
    """Seconds from a submitted HIT to the finished TrueSkill ranking (the sweep's last
    view) that counts it, and how many metric runs were unfinished then."""
    version = submit_one_hit()
    started = time.monotonic()
    done = RankingRun.objects.filter(
        campaign__slug=RANKED, protocol="e2e", status="done", judgments_version__gte=version
    )
    try:
        wait_for(done.exists, f"no ranking of version {version}")
    except TimeoutError:  # reported as a figure: "more than --timeout"
        return float("inf"), MetricRun.objects.unfinished().count()
    seconds = time.monotonic() - started
    return seconds, MetricRun.objects.unfinished().count()


def submit_one_hit() -> int:
    """A new crowd worker takes a HIT and submits it through the annotator pages' own
    functions; the criterion's judgments version it made."""
    campaign = Campaign.objects.get(slug=RANKED)
    annotator = Annotator.objects.create(
        campaign=campaign, source="prolific", external_id=f"measured-{time.time_ns()}"
    )
    started = flow.start(RANKED, "quality", [annotator.pk])
    assert started is not None and started.assignment is not None, "no HIT handed out"
    posted = flow.posted_hit(started.assignment.pk, [annotator.pk], RANKED, "quality")
    assert posted is not None
    answers = {
        shown.key: Answer(score=SCORES[shown.slots[0].output.system.name]) for shown in posted.shown
    }
    flow.submit(posted, RANKED, "quality", answers, f"measured-{time.time_ns()}")
    return campaign.criteria.get(name="quality").judgments_version


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + ARGS.timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {ARGS.timeout} s")
        time.sleep(0.1)


if __name__ == "__main__":
    main()
