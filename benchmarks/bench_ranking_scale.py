"""How fresh the rankings stay as a campaign grows: from a submitted HIT to each view's
fresh result, through the real sweep and worker, on PostgreSQL.

    .venv/bin/python benchmarks/bench_ranking_scale.py --judgments 15000 --json 15k.json
    .venv/bin/python benchmarks/bench_ranking_scale.py --judgments 1000000 --reuse
    .venv/bin/python benchmarks/bench_ranking_scale.py --compare 15k.json 100k.json 1m.json

It builds an E2E-shaped campaign (630 items, 21 systems, 5 outputs per HIT) holding
JUDGMENTS judgments of submitted HITs in a database of its own (bench_scale_<N>, kept, so
that --reuse skips the build next time): one HIT written through the ORM, the others copied
from it by INSERT ... SELECT over generate_series, so every column of today's tables is
filled as the ORM filled the first. It starts a Redis of its own and `celery worker -B` as
the tests do (tests/processes.py), with the sweep every SWEEP seconds and no debounce, lets
the worker bring every view up to date (the first cycle also loads the compiled kernels),
then submits one more HIT through annotation.handout.flow (start, posted_hit, submit) and
measures, for each registered view, the seconds from the submission's commit to the
finished run that covers it (RankingRun.finished_at), the worker's peak memory (VmHWM of
its processes) and what the database read meanwhile (pg_stat_database: pages and tuples).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import django
import psycopg

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
ITEMS, SYSTEMS, K = 630, 21, 5
SITE_ENV = {
    "SECRET_KEY": "bench-ranking-scale-only-" + "x" * 40,
    "DJANGO_SETTINGS_MODULE": "evalsite.settings",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--judgments", type=int, default=15_000, help="in the campaign")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--reuse", action="store_true", help="use bench_scale_<N> as an earlier run left it"
    )
    parser.add_argument(
        "--no-catch-up",
        action="store_true",
        help="record every view as fresh at the campaign's current judgments (a done run"
        " without results) instead of computing them first: saves a whole cycle at a million"
        " judgments; the measured cycle then also loads the worker's compiled kernels",
    )
    parser.add_argument("--drop", action="store_true", help="drop the database at the end")
    parser.add_argument("--sweep", type=float, default=2, help="JOB_SWEEP_SECONDS of the beat")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds to wait per cycle")
    parser.add_argument(
        "--postgres",
        default="postgres://postgres@127.0.0.1:5432",
        help="a server where the benchmark may create its database",
    )
    parser.add_argument(
        "--compare", nargs="+", type=Path, help="only print these --json files side by side"
    )
    return parser.parse_args()


ARGS = parse_args()
DATABASE = f"bench_scale_{ARGS.judgments}"
if ARGS.compare is None:
    os.environ.update(SITE_ENV, DATABASE_URL=f"{ARGS.postgres}/{DATABASE}")
    os.environ.pop("DEBUG", None)
    os.environ.pop("CELERY_BROKER_URL", None)
    django.setup()

    from django.core.management import call_command  # noqa: E402
    from django.db import connection, transaction  # noqa: E402
    from django.utils import timezone  # noqa: E402

    from annotation.handout import flow  # noqa: E402
    from annotation.handout.assignment import lock_criterion  # noqa: E402
    from annotation.handout.loads import sync_pool  # noqa: E402
    from annotation.handout.shown import Answer  # noqa: E402
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
    from ranking.models import RankingRun  # noqa: E402
    from ranking.service import fitting_protocols  # noqa: E402
    from tests.processes import RedisServer, start_worker, stop  # noqa: E402


def main() -> None:
    if ARGS.compare:
        compare([json.loads(path.read_text()) for path in ARGS.compare])
        return
    if not (ARGS.reuse and database_ready()):
        recreate_database()
        build_campaign(ARGS.judgments)
    if ARGS.no_catch_up:
        record_as_fresh()
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    redis = RedisServer(work)
    worker = None
    try:
        redis.start()
        env = {
            **os.environ,
            "VAR_DIR": str(work / "var"),
            "CELERY_BROKER_URL": redis.url,
            "PYTHONPATH": str(REPO),
            "JOB_SWEEP_SECONDS": str(ARGS.sweep),
            "RANKING_DEBOUNCE_SECONDS": "0",
        }
        worker = start_worker(env, work / "worker.log")
        memory = MemorySampler(worker.pid)
        memory.start()
        if not ARGS.no_catch_up:
            catch_up()
        reads = DatabaseReads()
        cpu_before, load_before = worker_cpu_seconds(worker.pid), os.getloadavg()[0]
        submitted_at, version = submit_one_hit()
        fresh = wait_for_fresh(version, submitted_at.timestamp())
        cpu = worker_cpu_seconds(worker.pid) - cpu_before
        load = (load_before + os.getloadavg()[0]) / 2
        read = reads.since()
        memory.stop()
        figures = summary(fresh, version, memory, read)
        figures.update(worker_cpu_seconds=round(cpu, 1), load_average=round(load, 1))
        report(figures)
        if ARGS.json:
            ARGS.json.write_text(json.dumps(figures, indent=1) + "\n")
    finally:
        if worker is not None:
            stop(worker)
        redis.kill()
        connection.close()
        if ARGS.drop:
            drop_database()


# The database -------------------------------------------------------------------------------


def admin_connection() -> psycopg.Connection:
    return psycopg.connect(f"{ARGS.postgres}/postgres", autocommit=True)


def database_ready() -> bool:
    with admin_connection() as admin:
        if not admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)
        ).fetchone():
            return False
    return Campaign.objects.filter(slug="scale").exists()


def recreate_database() -> None:
    with admin_connection() as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")


def drop_database() -> None:
    with admin_connection() as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def the_criterion() -> "CampaignCriterion":
    return CampaignCriterion.objects.select_related("campaign").get(
        campaign__slug="scale", name="quality"
    )


# The campaign ------------------------------------------------------------------------------


def build_campaign(judgments: int) -> None:
    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    hits = max(1, judgments // K)
    campaign, items, outputs, annotators = campaign_rows(hits)
    template = first_hit(campaign, items, outputs, annotators)
    copy_hits(template, hits, items, outputs, annotators)
    criterion = campaign.criteria.get(name="quality")
    with transaction.atomic():
        sync_pool(lock_criterion(criterion))  # the kept loads, as a first hand-out counts them
        CampaignCriterion.objects.filter(pk=criterion.pk).record_judgments_change()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # as autovacuum would have by now
    count = Judgment.objects.count()
    print(f"campaign of {count:,} judgments built in {time.perf_counter() - started:.0f} s")


def campaign_rows(hits: int):
    campaign = Campaign.objects.create(
        slug="scale",
        name="Scale",
        status=Campaign.Status.OPEN,
        outputs_per_hit=K,
        min_seconds_per_hit=0,
        standard_text="The Vaults is a pub near Café Adriatic.",
        standard_input={"attributes": [["name", "The Vaults"], ["eatType", "pub"]]},
    )
    for name in ("quality", "naturalness"):
        CampaignCriterion.objects.create(campaign=campaign, name=name, comprehension_check=False)
    systems = System.objects.bulk_create(
        System(campaign=campaign, name=f"system-{n:02d}", key=f"system-{n:02d}")
        for n in range(SYSTEMS)
    )
    items = Item.objects.bulk_create(
        Item(
            campaign=campaign,
            external_id=f"mr-{n}",
            input_kind="mr",
            input_data={"attributes": [["name", f"The Place {n}"], ["eatType", "pub"]]},
            input_key=f"scale {n}",
            references=[f"The Place {n} is a pub."],
        )
        for n in range(ITEMS)
    )
    outputs = Output.objects.bulk_create(
        (
            Output(item=item, system=system, text=f"The Place {i} is a pub ({system.name}).")
            for i, item in enumerate(items)
            for system in systems
        ),
        batch_size=5000,
    )
    # Annotator a does HITs 630a .. 630a + 629: each item once.
    annotators = Annotator.objects.bulk_create(
        Annotator(campaign=campaign, source="prolific", external_id=f"bulk-{n}")
        for n in range(hits // ITEMS + 1)
    )
    for rows in (items, outputs, annotators):
        ids = [row.pk for row in rows]
        assert ids == list(range(ids[0], ids[0] + len(ids))), "ids not consecutive"
    return campaign, items, outputs, annotators


def slot_output(n: int, i: int, outputs) -> int:
    """HIT n: item n mod 630, systems 5n .. 5n+4 mod 21."""
    return outputs[(n % ITEMS) * SYSTEMS + (K * n + i) % SYSTEMS].pk


def first_hit(campaign, items, outputs, annotators) -> dict[str, int]:
    """HIT 0 through the ORM, the template of the others; the first id of each table."""
    criterion = campaign.criteria.get(name="quality")
    hit = Hit.objects.create(campaign=campaign, item=items[0], criterion=criterion)
    slots = HitOutput.objects.bulk_create(
        HitOutput(hit=hit, output_id=slot_output(0, i, outputs), position=i + 1) for i in range(K)
    )
    now = timezone.now()
    assignment = Assignment.objects.create(
        hit=hit,
        annotator=annotators[0],
        status=Assignment.Status.SUBMITTED,
        started_at=now - timedelta(seconds=60),
        submitted_at=now,
    )
    judgments = Judgment.objects.bulk_create(
        Judgment(assignment=assignment, slot=slot, criterion=criterion, score=score(0, i))
        for i, slot in enumerate(slots)
    )
    return {
        "annotation_hit": hit.pk,
        "annotation_hitoutput": slots[0].pk,
        "annotation_assignment": assignment.pk,
        "annotation_judgment": judgments[0].pk,
    }


def score(n: int, i: int) -> int:
    """System s scores around 40 + 5 s, with noise; the SQL below computes the same."""
    system = (K * n + i) % SYSTEMS
    return max(1, min(200, 40 + 5 * system + (K * n + i) * 7919 % 61 - 30))


def copy_hits(first: dict[str, int], hits: int, items, outputs, annotators) -> None:
    """HITs 1 .. hits-1 as copies of HIT 0 with their own item, outputs, annotator and
    scores, ids following the first's (the database is new)."""
    h, a = first["annotation_hit"], first["annotation_assignment"]
    s, j = first["annotation_hitoutput"], first["annotation_judgment"]
    item0, output0, annotator0 = items[0].pk, outputs[0].pk, annotators[0].pk
    overrides = {
        "annotation_hit": {"id": f"{h} + n", "item_id": f"{item0} + mod(n, {ITEMS})"},
        "annotation_assignment": {
            "id": f"{a} + n",
            "hit_id": f"{h} + n",
            "annotator_id": f"{annotator0} + n / {ITEMS}",
        },
        "annotation_hitoutput": {
            "id": f"{s} + {K} * n + i",
            "hit_id": f"{h} + n",
            "position": "i + 1",
            "output_id": f"{output0} + mod(n, {ITEMS}) * {SYSTEMS} + mod({K} * n + i, {SYSTEMS})",
        },
        "annotation_judgment": {
            "id": f"{j} + {K} * n + i",
            "assignment_id": f"{a} + n",
            "slot_id": f"{s} + {K} * n + i",
            "score": f"greatest(1, least(200, 40 + 5 * mod({K} * n + i, {SYSTEMS})"
            f" + mod(({K}::bigint * n + i) * 7919, 61) - 30))",
        },
    }
    with connection.cursor() as cursor:
        for table, columns in overrides.items():
            cursor.execute(copy_sql(table, columns, first[table]), [hits])
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" (SELECT max(id) FROM {table}))"
            )


def copy_sql(table: str, overrides: dict[str, str], first_id: int) -> str:
    """Copies of the first HIT's rows of `table` (row i of it for slot i), one per HIT n."""
    with connection.cursor() as cursor:
        names = [c.name for c in connection.introspection.get_table_description(cursor, table)]
    select = ", ".join(overrides.get(name, f"t.{name}") for name in names)
    rows = K if table in ("annotation_hitoutput", "annotation_judgment") else 1
    return (
        f"INSERT INTO {table} ({', '.join(names)}) SELECT {select}"
        f" FROM {table} t JOIN generate_series(0, {rows - 1}) i ON t.id = {first_id} + i"
        " CROSS JOIN generate_series(1, %s - 1) n ORDER BY n, i"
    )


def catch_up() -> None:
    """Every view up to date with the campaign as built (or as the last run left it), and
    the worker's kernels loaded, before the HIT that is measured."""
    started = time.time()
    first = wait_for_fresh(the_criterion().judgments_version, started)
    if max(first.values()) < 0:  # fresh already (--reuse): a HIT to load the kernels
        warm_at, warm_version = submit_one_hit()
        first = wait_for_fresh(warm_version, warm_at.timestamp())
    print(f"first cycle (catch-up, kernels loaded): {max(first.values()):.1f} s")


def record_as_fresh() -> None:
    criterion = the_criterion()
    RankingRun.objects.bulk_create(
        RankingRun(
            campaign=criterion.campaign,
            criterion=criterion,
            protocol=name,
            status=RankingRun.Status.DONE,
            finished_at=timezone.now(),
            judgments_version=criterion.judgments_version,
            note="bench_ranking_scale: recorded as fresh, not computed",
        )
        for name in fitting_protocols(criterion)
    )


# The measured HIT ---------------------------------------------------------------------------


def submit_one_hit():
    """A new crowd worker takes a HIT and submits it through the annotator pages' own
    functions; when it committed, and the criterion's judgments version it made."""
    campaign = Campaign.objects.get(slug="scale")
    annotator = Annotator.objects.create(
        campaign=campaign, source="prolific", external_id=f"measured-{time.time_ns()}"
    )
    started = flow.start("scale", "quality", [annotator.pk])
    assert started is not None and started.assignment is not None, "no HIT handed out"
    posted = flow.posted_hit(started.assignment.pk, [annotator.pk], "scale", "quality")
    assert posted is not None
    answers = {shown.key: Answer(score=100) for shown in posted.shown}
    flow.submit(posted, "scale", "quality", answers, "measured")
    submitted_at = timezone.now()
    return submitted_at, the_criterion().judgments_version


def wait_for_fresh(version: int, since: float) -> dict[str, float]:
    """Seconds from `since` (a timestamp) to the finished run of each view covering
    `version`; fails on a failed run or after the timeout."""
    deadline = time.monotonic() + ARGS.timeout
    criterion = the_criterion()
    views = fitting_protocols(criterion)  # the sweep's views of RankME (not WebNLG's)
    while time.monotonic() < deadline:
        runs = RankingRun.objects.for_criterion(criterion).filter(judgments_version__gte=version)
        failed = runs.filter(status=RankingRun.Status.FAILED).first()
        if failed is not None:
            raise RuntimeError(f"run {failed.pk} ({failed.protocol}) failed: {failed.error}")
        done = dict(
            runs.filter(status=RankingRun.Status.DONE)
            .order_by("-finished_at")  # the earliest of a view's runs last: the one kept
            .values_list("protocol", "finished_at")
        )
        if set(views) <= set(done) and not RankingRun.objects.pending().exists():
            return {name: done[name].timestamp() - since for name in views}
        time.sleep(0.25)
    raise RuntimeError(f"not every view was fresh within {ARGS.timeout} s")


# What it cost ---------------------------------------------------------------------------------


class MemorySampler(threading.Thread):
    """The worker's processes (the main one and its pool's children): the highest resident
    set any of them reached (VmHWM) and the largest sum of their proportional sets sampled
    (Pss: a page shared since the fork counts once over the processes that share it, where
    their resident sets would count it in each)."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root, self.done = root, threading.Event()
        self.peak_process_kb, self.peak_total_kb = 0, 0

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.sample()

    def sample(self) -> None:
        total = 0
        for pid in process_tree(self.root):
            status = read_status(pid)
            self.peak_process_kb = max(self.peak_process_kb, status.get("VmHWM", 0))
            total += proportional_kb(pid)
        self.peak_total_kb = max(self.peak_total_kb, total)

    def stop(self) -> None:
        self.done.set()
        self.join()
        self.sample()


def process_tree(root: int) -> set[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    members, changed = {root}, True
    while changed:
        more = {pid for pid, parent in parents.items() if parent in members} - members
        members |= more
        changed = bool(more)
    return members


TICKS = os.sysconf("SC_CLK_TCK")


def worker_cpu_seconds(root: int) -> float:
    """CPU seconds the worker's processes used so far (their threads included): the cost of
    a cycle whatever else the machine runs, where wall time depends on it."""
    total = 0.0
    for pid in process_tree(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15]) / TICKS
    return total


def read_status(pid: int) -> dict[str, int]:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {
        key: int(value.split()[0])
        for key, value in (line.split(":", 1) for line in lines)
        if key in ("VmHWM", "VmRSS")
    }


def proportional_kb(pid: int) -> int:
    """The process's proportional set size (Pss, /proc/PID/smaps_rollup), 0 if gone."""
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return 0
    found = [line.split()[1] for line in lines if line.startswith("Pss:")]
    return int(found[0]) if found else 0


class DatabaseReads:
    """pg_stat_database of the benchmark's database: pages read (from the buffer cache or
    the disk) and tuples returned by scans, from now to `since()`."""

    QUERY = (
        "SELECT blks_hit + blks_read, blks_read, tup_returned, tup_fetched"
        " FROM pg_stat_database WHERE datname = %s"
    )

    def __init__(self) -> None:
        time.sleep(1.5)  # statistics reach the view up to a second late
        self.before = self.read()

    def read(self) -> tuple[int, ...]:
        with admin_connection() as admin:
            row = admin.execute(self.QUERY, (DATABASE,)).fetchone()
        assert row is not None, f"no statistics for {DATABASE}"
        return tuple(row)

    def since(self) -> dict[str, int]:
        time.sleep(1.5)
        after = self.read()
        names = ("pages", "pages_from_disk", "tuples_returned", "tuples_fetched")
        return {name: int(b - a) for name, a, b in zip(names, self.before, after, strict=True)}


def summary(fresh: dict[str, float], version: int, memory: MemorySampler, read) -> dict:
    criterion = the_criterion()
    runs = RankingRun.objects.for_criterion(criterion).filter(
        judgments_version__gte=version, status=RankingRun.Status.DONE
    )
    views = {}
    for name in fresh:
        run = runs.filter(protocol=name).order_by("finished_at").first()
        views[name] = {
            "seconds_to_fresh": round(fresh[name], 2),
            "load_seconds": round(run.load_seconds or 0.0, 2),
            "compute_seconds": round(run.compute_seconds or 0.0, 2),
        }
    return {
        "judgments": Judgment.objects.count(),
        "views": views,
        "all_fresh_seconds": round(max(fresh.values()), 2),
        "peak_worker_mb": round(memory.peak_process_kb / 1024),
        "peak_worker_total_mb": round(memory.peak_total_kb / 1024),
        "database_reads": read,
        "sweep_seconds": ARGS.sweep,
        "code": git_head(),
    }


def git_head() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    )
    return done.stdout.strip()


def report(figures: dict) -> None:
    print(f"\n{figures['judgments']:,} judgments (code {figures['code']}); the HIT to fresh:")
    print(f"{'view':<12}{'to fresh, s':>12}{'load, s':>9}{'compute, s':>11}")
    for name, view in figures["views"].items():
        print(
            f"{name:<12}{view['seconds_to_fresh']:>12.1f}{view['load_seconds']:>9.2f}"
            f"{view['compute_seconds']:>11.2f}"
        )
    print(f"{'all views':<12}{figures['all_fresh_seconds']:>12.1f}")
    print(
        f"worker CPU: {figures['worker_cpu_seconds']:.1f} s; machine load average"
        f" {figures['load_average']:.1f} on {os.cpu_count()} cores"
    )
    reads = figures["database_reads"]
    print(
        f"worker peak: {figures['peak_worker_mb']} MB in one process,"
        f" {figures['peak_worker_total_mb']} MB all its processes together (Pss)"
    )
    print(
        f"database: {reads['pages']:,} pages read ({reads['pages_from_disk']:,} from disk),"
        f" {reads['tuples_returned']:,} tuples returned, {reads['tuples_fetched']:,} fetched"
    )


def compare(results: list[dict]) -> None:
    """Earlier --json files side by side, in the order given."""
    header = "".join(f"{result['judgments']:>12,}" for result in results)
    print(f"{'judgments':<22}{header}")
    names = list(results[0]["views"])
    for name in names:
        cells = "".join(
            f"{result['views'].get(name, {}).get('seconds_to_fresh', float('nan')):>12.1f}"
            for result in results
        )
        print(f"{name + ' to fresh, s':<22}{cells}")
    print(
        f"{'all views fresh, s':<22}" + "".join(f"{r['all_fresh_seconds']:>12.1f}" for r in results)
    )
    cpu = "".join(f"{r.get('worker_cpu_seconds', float('nan')):>12.1f}" for r in results)
    print(f"{'worker CPU, s':<22}{cpu}")
    print(f"{'worker peak, MB':<22}" + "".join(f"{r['peak_worker_mb']:>12}" for r in results))
    pages = "".join(f"{r['database_reads']['pages']:>12,}" for r in results)
    print(f"{'database pages read':<22}{pages}")


if __name__ == "__main__":
    main()
