"""The share of lines the tests run, per package, against the floors below: prints the table
and exits 1 if a package is under its floor. `bin/test --coverage` runs it after pytest (CI
does: .ci/run), on the lines slipcover saw run (the JSON files it names; [tool.slipcover] in
pyproject.toml says what is measured). coverage.py reads them: it decides what counts as a
line (a statement; [tool.coverage.report] says what is left out), as it did when it measured
the suite itself, and it keeps them in `.coverage` for its own reports (`coverage html`).
Run by hand: `.venv/bin/python -m tests.coverage_floors var/test/coverage-*.json`.

The floors are on the code that decides what a ranking counts and who is paid, and on the
one door for outbound HTTP (what may be reached), where a line no test runs is a decision no
test checks. They are meant to sit a point or two under what
CI measures (docs/testing.md has the figures), so that a change which leaves new lines
untested there fails CI and ordinary churn does not; raise one when CI prints a share well
above it. Only the suite's own processes are measured: code that runs only in the Celery
workers and servers the tests start counts as not run.
"""

import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from coverage import Coverage, CoverageData
from coverage.exceptions import NoDataError

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Floor:
    pattern: str  # files, as coverage's include patterns take them
    percent: float
    why: str


FLOORS = [
    Floor("ranking/engine/*", 85, "every ranking's numbers: estimates, intervals, clusters"),
    Floor("ranking/protocols/*", 85, "which engine call and which judgments each view uses"),
    Floor("ranking/service*", 85, "what a run reads, ranks and stores"),
    Floor("ranking/permutation_check.py", 85, "how often a published procedure errs, per campaign"),
    Floor("ranking/claims.py", 85, "what a table claims, as its reader reads it"),
    Floor("ranking/batch.py", 85, "the queued runs ranked from one read"),
    Floor("annotation/handout/*", 85, "hand-out, kept loads and submission: what is judged"),
    Floor("annotation/identity.py", 85, "who an annotator is, exclusions"),
    Floor("annotation/removal.py", 85, "deletions that change what counts"),
    Floor("annotation/prolific.py", 85, "Prolific's confirmations: what counts, who is paid"),
    Floor("api/bonuses.py", 85, "bonuses through the idempotent ledger: who is paid"),
    Floor("api/prolific_events.py", 85, "Prolific's signed events: confirmations and returns"),
    Floor("jobs/claims.py", 85, "a job claimed once: no run stored twice, none lost"),
    Floor("outbound/*", 85, "outbound HTTP: pinned addresses, no private targets, limits"),
]


def percent_of(coverage: Coverage, pattern: str) -> float | None:
    """The share of the lines of the files matching `pattern`; None if no file does."""
    try:
        return coverage.report(include=[pattern], file=io.StringIO(), precision=1)
    except NoDataError:
        return None


def coverage_of(measured: list[Path], data_file: Path = REPO / ".coverage") -> Coverage:
    """coverage.py's reports over the lines that slipcover saw run, in the files it measured
    (those never imported included, with no line run), from one or more of its JSON files;
    the data kept in `data_file`."""
    data = CoverageData(basename=str(data_file))
    data.erase()
    for path in measured:
        for name, seen in json.loads(path.read_text())["files"].items():
            data.add_lines({str(REPO / name): seen["executed_lines"]})
    data.write()
    coverage = Coverage(data_file=data.base_filename(), config_file=str(REPO / "pyproject.toml"))
    coverage.load()
    return coverage


def main(measured: list[Path]) -> int:
    if not measured:
        print("coverage: no data (run bin/test --coverage first)", file=sys.stderr)
        return 1
    coverage = coverage_of(measured)
    try:
        total = coverage.report(file=io.StringIO(), precision=1)
    except NoDataError:
        print("coverage: no data (run bin/test --coverage first)", file=sys.stderr)
        return 1
    print(f"\ncoverage: {total:.1f}% of the apps' lines run by the tests; floors:")
    under = []
    for floor in FLOORS:
        measured = percent_of(coverage, floor.pattern)
        if measured is None:
            print(f"  {floor.pattern:26} matches no file: move its floor with the code")
            under.append(floor.pattern)
            continue
        mark = "ok" if measured >= floor.percent else "UNDER"
        line = f"{floor.pattern:26} {measured:5.1f}%  floor {floor.percent:g}%  {mark}"
        print(f"  {line}  {floor.why}")
        if measured < floor.percent:
            under.append(floor.pattern)
    if under:
        print(f"coverage: under the floor: {', '.join(under)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main([Path(name) for name in sys.argv[1:]]))
