"""The README's first campaign from published data, run as written: its E2E block is read
from README.md (so this test follows the README when it changes) and run by bash in a fresh
clone's layout: the project at ./, the shared data at ../shared/data/e2e (here a copy of
the E2E folder with its first four MRs, tests/e2e_subset.py, so that the 21 systems, the
ranking, the metrics, the datasheet and the bundle take a minute or two, not ten), a
database of its own, and nothing else made beforehand but what bin/serve makes (migrate)."""

import csv
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.e2e_subset import e2e_subset
from tests.processes import REPO

SECTION = "## A first campaign from published data"


def readme_e2e_block() -> str:
    """The first sh block of the README's section on a first campaign."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert found, f"no sh block under {SECTION!r} in README.md"
    return found.group(1)


def fresh_clone(tmp_path: Path, e2e_data: Path) -> Path:
    """A clone's layout: the repository's files the commands read (manage.py and the
    installed .venv, linked), and ../shared/data/e2e beside it; no reports/ folder."""
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "manage.py").symlink_to(REPO / "manage.py")
    (clone / ".venv").symlink_to(REPO / ".venv")
    e2e_subset(e2e_data, tmp_path / "shared" / "data" / "e2e")
    return clone


def systems_rated(tmp_path: Path) -> set[str]:
    """The systems the subset's quality ratings have HITs of (18 of the 21)."""
    ratings = tmp_path / "shared" / "data" / "e2e" / "human_ratings" / "quality.csv"
    with ratings.open(newline="", encoding="utf-8") as file:
        return {row[f"sys{n}"] for row in csv.DictReader(file) for n in range(1, 6)}


def test_readme_e2e_block_is_the_one_this_test_runs():
    block = readme_e2e_block()
    assert "import_items e2e ../shared/data/e2e/testset_w_refs.csv" in block
    assert "import_outputs e2e --create-system --files ../shared/data/e2e/outputs/*.tsv" in block
    assert "datasheet e2e --out reports/" in block and "bundle e2e e2e-bundle.zip" in block


# Slow (half a minute: 7 commands after the migrate, each starting Django, and METEOR's Java): CI.
@pytest.mark.slow
def test_readme_e2e_block_runs_as_written_on_a_fresh_clone(tmp_path, e2e_data):
    clone = fresh_clone(tmp_path, e2e_data)
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "VAR_DIR": str(tmp_path / "var"),
    }
    env.pop("DEBUG", None)  # the block sets it, as a reader's shell would
    setup = subprocess.run(
        [".venv/bin/python", "manage.py", "migrate", "--verbosity", "0"],
        cwd=clone,
        env={**env, "DEBUG": "true"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert setup.returncode == 0, setup.stderr
    ran = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", readme_e2e_block()],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    with (clone / "quality.csv").open(newline="") as file:
        ranked = list(csv.DictReader(file))
    assert {row["system"] for row in ranked} == systems_rated(tmp_path)  # best first
    assert (clone / "e2e-metrics.csv").read_text().count("\n") == 1 + 21
    assert sorted(p.name for p in (clone / "reports").iterdir()) == [
        "e2e-datasheet.json",
        "e2e-datasheet.md",
    ]
    with zipfile.ZipFile(clone / "e2e-bundle.zip") as bundle:
        assert "manifest.json" in bundle.namelist()
