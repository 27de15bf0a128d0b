"""Crowd load on the production processes: gunicorn and a Celery worker with beat, on
PostgreSQL and Redis on loopback, driven by locust (benchmarks/locustfile.py) headless.

    .venv/bin/pip install -e ".[bench]"
    .venv/bin/python benchmarks/bench_load.py --judgments 15000 --scenario saturation
    .venv/bin/python benchmarks/bench_load.py --judgments 300000 --scenario launch

It creates a PostgreSQL database of its own (bench_load, dropped at the end) and a Redis of
its own on a free port, builds an E2E-shaped campaign (630 items, 21 systems, 5 outputs per
HIT) already holding JUDGMENTS judgments (written in bulk, by annotators of their own), starts
`gunicorn evalsite.wsgi -w WEB` and `celery -A evalsite worker -B` as the README does, and
runs one scenario:

- saturation: USERS crowd workers (default 200) doing whole visits back to back, no think
  time, for DURATION seconds;
- launch: 1,000 workers arriving over 60 s (a Prolific study's places filling), each doing
  one visit of 5-10 HITs with a think time per HIT around 10 s.

It prints per endpoint p50/p95/p99 and errors, HITs/s, then checks the database: every
submitted HIT has k judgments, no HIT was handed out twice, no annotator saw an item twice
in a criterion, no judgment was written twice.

The site runs as a plain-HTTP trial (SECURE_HTTPS=false) with DEBUG unset; the campaign's
minimum time per HIT is 0, so that HITs of the no-think-time scenario count like real ones.
"""

import argparse
import csv
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import django
import psycopg

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
VENV_BIN = Path(sys.executable).parent
ITEMS, SYSTEMS, K = 630, 21, 5
PERCENTILES = ("50%", "95%", "99%")
ENDPOINTS = ("entry", "instructions", "start", "HIT GET", "HIT POST", "finish")

# The environment every process of the site gets, as docs/production.md says,
# with a key of the benchmark's own and plain HTTP on loopback.
SITE_ENV = {
    "SECRET_KEY": "bench-load-only-" + "x" * 40,
    "SECURE_HTTPS": "false",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "DJANGO_SETTINGS_MODULE": "evalsite.settings",
    # Every simulated worker comes from 127.0.0.1: the entry link's limit per address
    # (RATE_LIMIT_ENTRY, 120 a minute) would refuse a launch's crowd, which in production
    # comes from as many addresses as people.
    "RATE_LIMIT_ENTRY": "off",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--judgments", type=int, default=15_000, help="already in the campaign")
    parser.add_argument("--scenario", choices=("saturation", "launch"), default="saturation")
    parser.add_argument("--users", type=int, help="saturation: 200; launch: 1,000")
    parser.add_argument("--duration", type=int, default=60, help="saturation seconds")
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument(
        "--postgres",
        default="postgres://postgres@127.0.0.1:5432",
        help="a server where the benchmark may create and drop its database",
    )
    parser.add_argument("--database", default="bench_load", help="created, and dropped after")
    parser.add_argument(
        "--worker-elsewhere",
        action="store_true",
        help="no Celery worker on this machine, as when workers have machines of their own:"
        " its rankings read every judgment, so their share of two cores grows with the"
        " campaign (the web's does not)",
    )
    parser.add_argument(
        "--no-sync-commit",
        action="store_true",
        help="diagnosis only: the database commits without waiting for its log to reach the"
        " disk, to show how much of the time is that wait (never run production so)",
    )
    return parser.parse_args()


# This process builds the campaign and checks the database afterwards, with the site's code.
ARGS = parse_args()
DATABASE = ARGS.database
os.environ.update(SITE_ENV, DATABASE_URL=f"{ARGS.postgres}/{DATABASE}")
os.environ.pop("DEBUG", None)
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from annotation.handout.assignment import lock_criterion  # noqa: E402
from annotation.handout.loads import sync_pool  # noqa: E402
from annotation.models import (  # noqa: E402
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    Hit,
    HitOutput,
    Item,
    Judgment,
    Output,
    System,
)
from tests.processes import RedisServer, free_port, start_worker, wait_for_port  # noqa: E402


def main() -> None:
    args, server = ARGS, ARGS.postgres
    recreate_database(server)
    work = Path(tempfile.mkdtemp(prefix="bench-load-"))
    redis = RedisServer(work)
    processes: list[subprocess.Popen] = []
    try:
        redis.start()
        env = {**os.environ, "VAR_DIR": str(work / "var"), "CELERY_BROKER_URL": redis.url}
        # This checkout's code in every process, whichever checkout the venv installed.
        env["PYTHONPATH"] = str(REPO)
        build_campaign(args.judgments)
        port = free_port()
        processes.append(start_web(env, work, port, args.web_workers))
        groups = {"web (gunicorn)": processes[0].pid}
        if not args.worker_elsewhere:
            worker = start_worker(env, work / "worker.log")
            # Rankings recompute as judgments arrive; in production the worker has machines
            # of its own, here it yields the CPU to the web processes (its CPU is reported).
            run_last(worker.pid)
            processes.append(worker)
            groups["Celery worker"] = worker.pid
        worker_note = "no worker" if args.worker_elsewhere else "worker -B"
        print(f"site on 127.0.0.1:{port}: gunicorn -w {args.web_workers}, {worker_note}; load ...")
        before, started = cpu_seconds(groups), time.time()
        client_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        sampler = SessionSampler(args.postgres)
        sampler.start()
        stats = run_locust(env, work, port, args)
        sampler.stop()
        elapsed, used = time.time() - started, cpu_seconds(groups)
        client_after = resource.getrusage(resource.RUSAGE_CHILDREN)  # locust, waited for
        before["load client (locust)"] = client_before.ru_utime + client_before.ru_stime
        used["load client (locust)"] = client_after.ru_utime + client_after.ru_stime
        hits = report(stats, args, elapsed)
        report_cpu(before, used, hits)
        sampler.report()
        check_database()
    finally:
        for process in reversed(processes):
            stop(process)
        redis.kill()
        connection.close()
        drop_database(server)
        shutil.rmtree(work, ignore_errors=True)


# Services ------------------------------------------------------------------------------------


def recreate_database(server: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")
        if ARGS.no_sync_commit:
            admin.execute(f"ALTER DATABASE {DATABASE} SET synchronous_commit = off")


def drop_database(server: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def start_web(env: dict, work: Path, port: int, workers: int) -> subprocess.Popen:
    manage = [str(VENV_BIN / "python"), "manage.py"]
    collect = [*manage, "collectstatic", "--noinput"]
    subprocess.run(collect, cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    command = [str(VENV_BIN / "gunicorn"), "evalsite.wsgi", "-w", str(workers)]
    command += ["-b", f"127.0.0.1:{port}", "--backlog", "4096"]
    with (work / "gunicorn.log").open("w") as log:
        web = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_for_port(port, web)
    return web


def run_last(pid: int) -> None:
    """The lowest CPU priority for the process group of `pid`. Where Linux schedules each
    session as a group (autogroup), a nice value counts only against the session's own
    processes: the worker, a session of its own, took as much CPU as all the web processes
    together until its group was given nice 19 too."""
    os.setpriority(os.PRIO_PGRP, pid, 19)
    autogroup = Path(f"/proc/{pid}/autogroup")
    if autogroup.exists():
        autogroup.write_text("19")


def stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# The campaign ---------------------------------------------------------------------------------


def build_campaign(judgments: int) -> None:
    """An E2E-shaped campaign holding `judgments` judgments of submitted HITs, balanced over
    items and systems, by bulk annotators who each see an item at most once."""
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    write_campaign(judgments // K)
    print(f"campaign of {judgments:,} judgments built in {time.perf_counter() - started:.0f} s")


def write_campaign(hits: int) -> None:
    campaign = Campaign.objects.create(
        slug="load",
        name="Load",
        status=Campaign.Status.OPEN,
        outputs_per_hit=K,
        min_seconds_per_hit=0,
        max_hits_per_annotator=20,
        standard_text="The Vaults is a pub near Café Adriatic.",
        standard_input={"attributes": [["name", "The Vaults"], ["eatType", "pub"]]},
    )
    for name in ("quality", "naturalness"):
        # Without the comprehension check (on by default): the visits measured are HITs.
        CampaignCriterion.objects.create(
            campaign=campaign,
            name=name,
            shows_input=name == "quality",
            comprehension_check=False,
        )
    systems = System.objects.bulk_create(
        System(campaign=campaign, name=f"system-{n:02d}", key=f"system-{n:02d}")
        for n in range(SYSTEMS)
    )
    quality = campaign.criteria.get(name="quality")
    items = Item.objects.bulk_create(e2e_shaped_item(campaign, n) for n in range(ITEMS))
    outputs = Output.objects.bulk_create(
        (
            Output(item=item, system=system, text=output_text(item, system))
            for item in items
            for system in systems
        ),
        batch_size=5000,
    )
    # HIT n: item n mod 630, systems 5n..5n+4 mod 21, by bulk annotator n // 630.
    annotators = Annotator.objects.bulk_create(
        Annotator(campaign=campaign, source="prolific", external_id=f"bulk-{n}")
        for n in range(hits // ITEMS + 1)
    )
    rng = random.Random(0)
    for first in range(0, hits, 10_000):
        batch = range(first, min(hits, first + 10_000))
        made = Hit.objects.bulk_create(
            Hit(campaign=campaign, item=items[n % ITEMS], criterion=quality) for n in batch
        )
        slots = HitOutput.objects.bulk_create(
            HitOutput(
                hit=hit,
                output=outputs[(n % ITEMS) * SYSTEMS + (K * n + i) % SYSTEMS],
                position=i + 1,
            )
            for hit, n in zip(made, batch, strict=True)
            for i in range(K)
        )
        assignments = Assignment.objects.bulk_create(
            Assignment(hit=hit, annotator=annotators[n // ITEMS], status="submitted")
            for hit, n in zip(made, batch, strict=True)
        )
        Judgment.objects.bulk_create(
            Judgment(
                assignment=assignments[j // K],
                slot=slot,
                criterion=quality,
                score=rng.randint(1, 200),
            )
            for j, slot in enumerate(slots)
        )
    criterion = quality
    with transaction.atomic():
        sync_pool(lock_criterion(criterion))  # counts the loads once, as a first hand-out would
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # as autovacuum would have by now in a running campaign


def e2e_shaped_item(campaign, n: int):
    attributes = [
        ["name", f"The Place {n}"],
        ["eatType", "restaurant"],
        ["food", "Italian"],
        ["priceRange", "moderate"],
        ["area", "riverside"],
        ["near", "The Bakers"],
    ]
    return Item(
        campaign=campaign,
        external_id=f"mr-{n}",
        input_kind="mr",
        input_data={"attributes": attributes},
        input_key=f"load {n}",
        references=[f"The Place {n} is a moderately priced Italian restaurant by the river."],
    )


def output_text(item, system) -> str:
    return (
        f"{item.input_data['attributes'][0][1]} is an Italian restaurant in the riverside "
        f"area near The Bakers with moderate prices ({system.name})."
    )


# The load -----------------------------------------------------------------------------------


def run_locust(env: dict, work: Path, port: int, args) -> dict[str, dict[str, str]]:
    if args.scenario == "saturation":
        users, rate, limit = args.users or 200, 50, args.duration
    else:  # a Prolific launch: the places fill within a minute; a visit lasts ~1-2 minutes
        users = args.users or 1000
        rate, limit = users / 60, 60 + 200
    command = [
        str(VENV_BIN / "locust"),
        "-f",
        str(REPO / "benchmarks" / "locustfile.py"),
        "--headless",
        "--only-summary",
        "-u",
        str(users),
        "-r",
        f"{rate:.3f}",
        "-t",
        f"{limit}s",
        # A launch's users finish their visit; saturation stops at once, so its rate is
        # that of the whole crowd.
        "--stop-timeout",
        "30" if args.scenario == "launch" else "0",
        "--host",
        f"http://127.0.0.1:{port}",
        "--csv",
        str(work / "load"),
        "--loglevel",
        "WARNING",
    ]
    if args.scenario == "launch":
        command.append("--exit-code-on-error=0")
    load_env = {**env, "LOAD_CAMPAIGN": "load", "LOAD_SCENARIO": args.scenario}
    with (work / "locust.log").open("w") as log:
        subprocess.run(command, cwd=REPO, env=load_env, stdout=log, stderr=subprocess.STDOUT)
    failures = (work / "load_failures.csv").read_text()
    if failures.count("\n") > 1:
        print("failures:\n" + failures)
    with (work / "load_stats.csv").open() as stats:
        return {row["Name"]: row for row in csv.DictReader(stats)}


def report(stats: dict[str, dict[str, str]], args, elapsed: float) -> int:
    """Print the figures; the number of HITs submitted."""
    print(f"\n{args.scenario}, {args.judgments:,} judgments before the load, {elapsed:.0f} s")
    print(f"{'endpoint':<14}{'requests':>9}{'errors':>8}" + "".join(f"{p:>8}" for p in PERCENTILES))
    for name in ENDPOINTS:
        row = stats.get(name)
        if row is None:
            continue
        print(
            f"{name:<14}{row['Request Count']:>9}{row['Failure Count']:>8}"
            + "".join(f"{row[p]:>6}ms" for p in PERCENTILES)
        )
    total = stats["Aggregated"]
    posts = int(stats["HIT POST"]["Request Count"]) - int(stats["HIT POST"]["Failure Count"])
    # Rates over locust's own run time (from the first user spawned to the last request).
    hits_per_second = float(stats["HIT POST"]["Requests/s"])
    print(
        f"HITs submitted {posts:,}: {hits_per_second:.1f} HITs/s; "
        f"{float(total['Requests/s']):.1f} requests/s, {total['Failure Count']} errors"
    )
    return posts


# Where the CPU goes ----------------------------------------------------------------------------

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(groups: dict[str, int]) -> dict[str, float]:
    """CPU seconds used so far by each process tree in `groups` (by its root pid) and by
    every PostgreSQL process (the server's own, shared with anything else it serves)."""
    parents, used, names = {}, {}, {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                names[int(entry.name)] = (entry / "comm").read_text().strip()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
            # utime and stime, and those of its children already waited for
            used[int(entry.name)] = sum(int(f) for f in fields[11:15]) / TICKS
    totals = {name: _tree(root, parents, used) for name, root in groups.items()}
    totals["PostgreSQL"] = sum(t for pid, t in used.items() if names[pid].startswith("postgres"))
    return totals


def _tree(root: int, parents: dict[int, int], used: dict[int, float]) -> float:
    members, changed = {root}, True
    while changed:
        more = {pid for pid, parent in parents.items() if parent in members} - members
        members |= more
        changed = bool(more)
    return sum(used.get(pid, 0.0) for pid in members)


def report_cpu(before: dict[str, float], after: dict[str, float], hits: int) -> None:
    print("\nCPU per submitted HIT (whole visits: entry, instructions, start, HITs, finish):")
    for name in before:
        spent = after[name] - before[name]
        print(f"  {name:<22}{spent:8.1f} s {1000 * spent / max(hits, 1):8.1f} ms/HIT")


# What the database's sessions wait for ------------------------------------------------------


class SessionSampler(threading.Thread):
    """Samples pg_stat_activity for the benchmark's database twice a second: how many of its
    sessions run a query, wait for a lock (the criterion's row lock: hand-outs and
    submissions queue on it), or sit in an open transaction between two queries."""

    def __init__(self, server: str) -> None:
        super().__init__(daemon=True)
        self.server, self.samples, self.done = server, [], threading.Event()

    def run(self) -> None:
        query = (
            "SELECT count(*) FILTER (WHERE state = 'active' AND wait_event_type IS DISTINCT"
            " FROM 'Lock'), count(*) FILTER (WHERE wait_event_type = 'Lock'),"
            " count(*) FILTER (WHERE state = 'idle in transaction')"
            " FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
        )
        with psycopg.connect(f"{self.server}/postgres", autocommit=True) as sessions:
            while not self.done.wait(0.5):
                self.samples.append(sessions.execute(query, (DATABASE,)).fetchone())

    def stop(self) -> None:
        self.done.set()
        self.join()

    def report(self) -> None:
        if not self.samples:
            return
        running, locked, between = (
            sum(column) / len(self.samples) for column in zip(*self.samples, strict=True)
        )
        print(
            f"\ndatabase sessions, mean of {len(self.samples)} samples: {running:.1f} running a"
            f" query, {locked:.1f} waiting for a lock, {between:.1f} in a transaction between"
            " queries"
        )


# Integrity ----------------------------------------------------------------------------------

CHECKS = {
    "submitted HITs without k judgments": """
        SELECT count(*) FROM annotation_assignment a JOIN annotation_hit h ON h.id = a.hit_id
        WHERE a.status = 'submitted' AND (
            SELECT count(*) FROM annotation_judgment j
            WHERE j.assignment_id = a.id AND j.criterion_id = h.criterion_id
        ) <> (SELECT count(*) FROM annotation_hitoutput s WHERE s.hit_id = a.hit_id)""",
    "HITs handed out twice (two assignments not expired)": """
        SELECT count(*) FROM (SELECT hit_id FROM annotation_assignment
        WHERE status <> 'expired' GROUP BY hit_id HAVING count(*) > 1) twice""",
    "items seen twice by one annotator in a criterion": """
        SELECT count(*) FROM (SELECT a.annotator_id, h.item_id, h.criterion_id
        FROM annotation_assignment a JOIN annotation_hit h ON h.id = a.hit_id
        GROUP BY 1, 2, 3 HAVING count(*) > 1) twice""",
    "judgments written twice (one slot, one assignment, one criterion)": """
        SELECT count(*) FROM (SELECT assignment_id, slot_id, criterion_id
        FROM annotation_judgment GROUP BY 1, 2, 3 HAVING count(*) > 1) twice""",
}


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM annotation_judgment")
        judgments = cursor.fetchone()[0]
        print(f"\nintegrity ({judgments:,} judgments in the database):")
        bad = 0
        for what, sql in CHECKS.items():
            cursor.execute(sql)
            found = cursor.fetchone()[0]
            bad += found
            print(f"  {what}: {found}")
    print("integrity: OK" if not bad else "integrity: FAILED")


if __name__ == "__main__":
    main()
