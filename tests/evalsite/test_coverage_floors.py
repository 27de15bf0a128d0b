"""tests/coverage_floors.py reads the lines slipcover saw run through coverage.py: a file's
statements count as run where slipcover named one of their lines, whichever other lines
(blank, comments, the rest of a statement written over several) it named, and the files of
two runs (bin/test's suite and its PostgreSQL tests) add up."""

import json
from pathlib import Path

from tests.coverage_floors import REPO, coverage_of, percent_of

ERRORS = "outbound/errors.py"
LINES = (REPO / ERRORS).read_text().splitlines()
# NotResolved.__init__'s two statements, which run only when a host does not resolve.
NOT_RESOLVED_BODY = {
    LINES.index(text) + 1
    for text in (
        '        super().__init__(f"{host} does not resolve ({reason})")',
        "        self.host, self.reason = host, reason",
    )
}


def slipcover_json(path: Path, lines) -> Path:
    path.write_text(json.dumps({"files": {ERRORS: {"executed_lines": sorted(lines)}}}))
    return path


def test_every_line_named_runs_every_statement(tmp_path):
    measured = slipcover_json(tmp_path / "suite.json", range(1, len(LINES) + 1))
    coverage = coverage_of([measured], tmp_path / ".coverage")
    assert percent_of(coverage, ERRORS) == 100.0


def test_statements_whose_lines_are_not_named_are_missing(tmp_path):
    every_other_line = set(range(1, len(LINES) + 1)) - NOT_RESOLVED_BODY
    measured = slipcover_json(tmp_path / "suite.json", every_other_line)
    coverage = coverage_of([measured], tmp_path / ".coverage")
    _, _, _, missing, _ = coverage.analysis2(str(REPO / ERRORS))
    assert set(missing) == NOT_RESOLVED_BODY
    assert percent_of(coverage, ERRORS) < 100.0


def test_two_runs_add_up(tmp_path):
    suite = slipcover_json(
        tmp_path / "suite.json", set(range(1, len(LINES) + 1)) - NOT_RESOLVED_BODY
    )
    postgres = slipcover_json(tmp_path / "postgres.json", NOT_RESOLVED_BODY)
    coverage = coverage_of([suite, postgres], tmp_path / ".coverage")
    assert percent_of(coverage, ERRORS) == 100.0
    assert (tmp_path / ".coverage").is_file()
