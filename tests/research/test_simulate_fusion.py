"""The fusion simulator on a small hand-made ratings file in the E2E CrowdFlower format, with
references: a judge that tracks the humans narrows the intervals, and the figures the issue
asks for come out."""

import csv
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SYSTEMS = ["best", "good", "mid", "low", "bad"]


def write_files(ratings: Path, references: Path, items: int = 24) -> None:
    """Each system's output on each item names the place or leaves it out, the better
    systems more often; the humans score outputs that name it higher (with annotators
    of their own habits), so the slot-error judge tracks them."""
    header = ["mr", "mr_id", "_worker_id", "_started_at", "_created_at"]
    header += [f"{c}{i}" for c in ("sys", "ref", "quality") for i in (1, 2, 3)]
    with ratings.open("w", newline="") as file, references.open("w", newline="") as refs:
        writer, ref_writer = csv.writer(file), csv.writer(refs)
        writer.writerow(header)
        ref_writer.writerow(["mr", "ref"])
        for item in range(items):
            mr = f"name[Place {item}], eatType[pub]"
            ref_writer.writerow([mr, f"Place {item} is a pub."])
            for first in range(len(SYSTEMS)):
                shown = [SYSTEMS[(first + j) % len(SYSTEMS)] for j in range(3)]
                right = [(item + SYSTEMS.index(s)) % 5 < 5 - SYSTEMS.index(s) for s in shown]
                texts = [f"Place {item} is a pub." if ok else "It is a pub." for ok in right]
                scores = [
                    90 - 8 * SYSTEMS.index(s) + (5 if ok else -40) + first
                    for s, ok in zip(shown, right, strict=True)
                ]
                row = [mr, item, f"w{first}", "11/28/2017 14:42:14", "11/28/2017 14:51:43"]
                writer.writerow([*row, *shown, *texts, *scores])


def test_simulator_reports_coverage_separation_and_the_hits_ratio(tmp_path):
    ratings, references, out = tmp_path / "r.csv", tmp_path / "refs.csv", tmp_path / "o.json"
    write_files(ratings, references)
    command = [sys.executable, str(REPO / "research" / "simulate_fusion.py")]
    command += ["--ratings", str(ratings), "--references", str(references)]
    command += ["--criterion", "quality", "--judge", "ser", "--seeds", "3", "--step", "20"]
    command += ["--cache", str(tmp_path / "cache"), "--json", str(out)]
    subprocess.run(command, check=True, capture_output=True, timeout=300, cwd=REPO)
    result = json.loads(out.read_text())
    assert result["file_hits"] == 120 and result["outputs"]["judged"] == 120
    truth = result["truth"]
    assert sorted(truth, key=truth.get, reverse=True) == SYSTEMS
    assert result["judge_against_humans"]["within_systems_pearson"] > 0.9
    assert 0.9 <= result["coverage"] <= 1.0
    assert len(result["runs"]) == 3 and result["runs"][0]["curve"][-1]["hits"] == 120
    ratio = result["human_hits_ratio"]
    assert ratio is not None and ratio <= 1.0
    first = result["runs"][0]["curve"][0]
    assert first["fused"]["mean_half_width"] < first["humans"]["mean_half_width"]
    assert (tmp_path / "cache" / "fusion-ser.json").exists()
