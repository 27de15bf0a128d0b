"""Peak memory of importing a large JSON Lines items file: streamed now, read whole before.

Writes a JSON Lines file of `document` items (default 100 MB) and a fresh SQLite database in a
temporary directory, then imports the file in a child process per variant, so that each peak
is the import's own:

- after: annotation.datafiles.importers.import_items on the open file, as the admin upload
  and the import command now call it;
- before: the importer of an earlier commit (--before REV, e.g. main), extracted from git into
  a temporary package, given the file's bytes as the admin upload gave them (upload.read()).

Reports the file size, rows, seconds, peak RSS (ru_maxrss) and its rise over the RSS just
before the import, and with --tracemalloc the peak of Python allocations during the import
(tracemalloc makes the import about twice as slow).

    python benchmarks/bench_import_memory.py                    # 100 MB, after only
    python benchmarks/bench_import_memory.py --before main      # and main's importer
    python benchmarks/bench_import_memory.py --mb 20 --before main --tracemalloc
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import django
from django.core.management import call_command

REPO = Path(__file__).resolve().parent.parent
WORDS = (
    "the a restaurant pub river city centre family friendly food price cheap high moderate "
    "coffee shop near serves Italian French Chinese English rating customer average area"
).split()
# Modules of the importer as it was; models and anything else come from today's annotation.
BEFORE_MODULES = ("importers.py", "datafiles.py", "inputs.py")


def write_items(path: Path, megabytes: int, seed: int = 0) -> int:
    """Unique `document` items, about 550 bytes a line, until the file has `megabytes`."""
    rng = random.Random(seed)
    target, rows = megabytes * 1024 * 1024, 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < target:
            text = " ".join(rng.choice(WORDS) for _ in range(60))
            item = {
                "id": f"doc-{rows}",
                "kind": "document",
                "input": {"title": f"Place {rows}", "text": text, "question": "area"},
                "references": [" ".join(rng.choice(WORDS) for _ in range(12))],
            }
            out.write(json.dumps(item) + "\n")
            rows += 1
    return rows


def current_rss_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def before_package(rev: str, directory: Path) -> str:
    """The importer of commit `rev` as package `annotation_before`; returns its name."""
    package = directory / "annotation_before"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text("from annotation.models import *  # noqa: F403\n")
    for name in BEFORE_MODULES:
        source = subprocess.run(
            ["git", "show", f"{rev}:annotation/{name}"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (package / name).write_text(source)
    return "annotation_before"


def child(variant: str, items: Path, work: Path, rev: str, trace: bool) -> dict:
    """Runs in its own process: set up Django on a fresh database, import, measure."""
    os.environ.update(
        DATABASE_URL=f"sqlite:///{work / f'{variant}.sqlite3'}",
        SECRET_KEY="benchmark-only-key-not-secret-0123456789-abcdefghijklmnopqrstuvwxyz",
        DEBUG="false",  # DEBUG keeps every query in memory
        DJANGO_SETTINGS_MODULE="evalsite.settings",
    )
    sys.path[:0] = [str(REPO), str(work)]
    django.setup()
    # Models can be imported only once the apps are set up, on this process's own database.
    from annotation.models import Campaign  # noqa: PLC0415

    call_command("migrate", verbosity=0)
    campaign = Campaign.objects.create(slug="bench", name="bench")
    if variant == "before":
        module = importlib.import_module(f"{before_package(rev, work)}.importers")
    else:
        from annotation.datafiles import importers as module  # noqa: PLC0415
    return measure(lambda: run_import(module, variant, campaign, items), trace)


def run_import(module, variant: str, campaign, items: Path):
    if variant == "before":
        return module.import_items(campaign, items.read_bytes(), items.name)
    with items.open("rb") as file:
        return module.import_items(campaign, file, items.name)


def measure(work, trace: bool) -> dict:
    baseline = current_rss_mib()
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    summary = work()
    seconds = time.perf_counter() - start
    traced = tracemalloc.get_traced_memory()[1] / 2**20 if trace else None
    return {
        "rows": summary.rows,
        "seconds": round(seconds, 1),
        "baseline_rss_mib": round(baseline, 1),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "rise_mib": round(peak_rss_mib() - baseline, 1),
        "tracemalloc_peak_mib": round(traced, 1) if traced is not None else None,
    }


def run_variant(variant: str, items: Path, work: Path, args) -> dict:
    command = [sys.executable, __file__, "--child", variant, "--items", str(items)]
    command += ["--work", str(work), "--before", args.before or "main"]
    command += ["--tracemalloc"] if args.tracemalloc else []
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(items: Path, rows: int, results: dict) -> None:
    size = items.stat().st_size / 2**20
    print(f"file: {size:.1f} MiB JSON Lines, {rows:,} items")
    print(
        f"{'variant':8} {'seconds':>8} {'peak RSS':>10} {'rise':>10} {'tracemalloc':>12}"
        f" {'rise/file':>10}"
    )
    for variant, r in results.items():
        traced = f"{r['tracemalloc_peak_mib']:.1f} MiB" if r["tracemalloc_peak_mib"] else "-"
        print(
            f"{variant:8} {r['seconds']:>8.1f} {r['peak_rss_mib']:>6.1f} MiB"
            f" {r['rise_mib']:>6.1f} MiB {traced:>12} {r['rise_mib'] / size:>9.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100, help="size of the items file")
    parser.add_argument("--before", help="also measure the importer of this git commit")
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--items", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = child(args.child, args.items, args.work, args.before, args.tracemalloc)
        print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        items = work / "items.jsonl"
        rows = write_items(items, args.mb)
        variants = ["before", "after"] if args.before else ["after"]
        results = {v: run_variant(v, items, work, args) for v in variants}
        report(items, rows, results)


if __name__ == "__main__":
    main()
