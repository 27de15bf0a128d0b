"""The campaign simulator runs on any ratings file in the E2E CrowdFlower format: here a small
hand-made one with a clear structure, which the simulator must recover."""

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Each test runs the simulator in an interpreter of its own (Django set up, the engines
# loaded, most of them a migrated SQLite and a simulated truth): 15 to 70 s a test on the
# loaded 2-core machine, 8 minutes in all. CI runs them (bin/test --slow).
pytestmark = pytest.mark.research

REPO = Path(__file__).resolve().parents[2]
SYSTEMS = {"best": 300, "good": 200, "mid": 100, "low": 50, "bad": 10}


def write_ratings(path: Path, items: int = 12) -> None:
    header = ["mr", "mr_id", "_worker_id", "_started_at", "_created_at"]
    header += [f"{c}{i}" for c in ("sys", "ref", "quality") for i in (1, 2, 3)]
    names = list(SYSTEMS)
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        for item in range(items):
            for first in range(len(names)):
                shown = [names[(first + j) % len(names)] for j in range(3)]
                row = [f"name[Place {item}], eatType[pub]", item, f"w{first}"]
                row += ["11/28/2017 14:42:14", "11/28/2017 14:51:43", *shown]
                row += [f"{name} text for place {item}." for name in shown]
                row += [SYSTEMS[name] for name in shown]
                writer.writerow(row)


SIMULATOR = [sys.executable, str(REPO / "research" / "simulate_campaign.py")]


@pytest.fixture(scope="module")
def database_run(tmp_path_factory) -> tuple[Path, Path]:
    """The hand-made file replayed through the database (the platform's own hand-out) by both
    policies, 2 seeds, both estimators: run once for the tests that read or reuse its runs
    (each database replay migrates a database and computes the truth anew)."""
    folder = tmp_path_factory.mktemp("database-run")
    ratings, out = folder / "ratings.csv", folder / "out.json"
    write_ratings(ratings)
    command = [*SIMULATOR, "--ratings", str(ratings), "--criterion", "quality", "--seeds", "2"]
    command += ["--policies", "balanced,active", "--step", "20", "--json", str(out)]
    subprocess.run(command, check=True, capture_output=True, timeout=600, cwd=REPO)
    return ratings, out


def test_simulator_recovers_a_clear_ranking_from_any_file_in_the_format(database_run):
    result = json.loads(database_run[1].read_text())
    assert result["file_hits"] == 60 and result["budget"] == 120
    truth = dict(zip(result["truth"]["systems"], result["truth"]["rating"], strict=True))
    assert sorted(truth, key=truth.get, reverse=True) == list(SYSTEMS)
    # Every system scores the same on every item: each beats those below it whenever both are
    # shown, so the implied order is the truth's, and no pair is ordered otherwise.
    implied = dict(zip(result["truth"]["systems"], result["truth"]["implied_rating"], strict=True))
    assert sorted(implied, key=implied.get, reverse=True) == list(SYSTEMS)
    assert result["truth"]["pairs_the_implied_rating_orders_otherwise"] == []
    for estimator in ("bt", "e2e"):
        summary = result["summary"][estimator]
        assert summary["target"] == 1.0
        for policy in ("balanced", "active"):
            assert len(summary["policies"][policy]["hits_to_target"]) == 2
            runs = result["runs"][policy]
            assert runs[0]["curve"][estimator][-1]["agreement"] == 1.0
    assert set(result["runs"]["active"][0]["composed"]) <= {"active", "balanced"}


def test_simulator_reuses_stored_balanced_runs(database_run, tmp_path):
    ratings, first = database_run
    second = tmp_path / "b.json"
    command = [*SIMULATOR, "--ratings", str(ratings), "--criterion", "quality", "--seeds", "1"]
    command += ["--policies", "balanced", "--estimators", "bt", "--reuse", str(first)]
    again = [*command, "--step", "20", "--json", str(second)]
    done = subprocess.run(again, check=True, capture_output=True, text=True, cwd=REPO)
    assert "reused" in done.stdout
    stored = json.loads(first.read_text())["runs"]["balanced"]
    assert json.loads(second.read_text())["runs"]["balanced"] == stored[:1]
    other_step = [*command, "--step", "30", "--json", str(tmp_path / "c.json")]
    refused = subprocess.run(other_step, capture_output=True, text=True, cwd=REPO)
    assert refused.returncode != 0 and "other checkpoints" in refused.stderr


def test_simulator_replays_in_memory_with_the_same_truth(database_run, tmp_path):
    """--in-memory replays the policies without the database from the same truth; its runs
    are never taken for database runs by --reuse."""
    ratings, database = database_run
    memory = tmp_path / "m.json"
    command = [*SIMULATOR, "--ratings", str(ratings), "--criterion", "quality", "--seeds", "2"]
    command += ["--estimators", "bt", "--step", "20"]
    in_memory = [*command, "--policies", "balanced,active", "--in-memory", "--json", str(memory)]
    in_memory += ["--doubt-width", "2", "--close-when-stable", "40"]
    subprocess.run(in_memory, check=True, capture_output=True, cwd=REPO)
    result = json.loads(memory.read_text())
    assert (result["replay"], result["doubt_width"]) == ("in memory", 2.0)
    # The clear ranking's clusters settle early: a criterion set to close after 40 stable
    # HITs closes in every run, 40 or more HITs after its clusters last changed.
    closing = result["summary"]["bt"]["policies"]["balanced"]["close_when_stable"]["40"]
    assert closing["closed"] == 2 and closing["agreement_median"] == 1.0
    assert 60 <= closing["hits_median"] <= 120
    for policy in ("balanced", "active"):
        assert [run["curve"]["bt"][-1]["agreement"] for run in result["runs"][policy]] == [1, 1]
    unspread = tmp_path / "u.json"
    again = [*command, "--policies", "balanced", "--in-memory", "--without-item-spread"]
    subprocess.run([*again, "--json", str(unspread)], check=True, capture_output=True, cwd=REPO)
    assert json.loads(unspread.read_text())["replay"] == "in memory, without item spread"
    mixed = [*command, "--policies", "balanced", "--json", str(tmp_path / "d.json")]
    refused = subprocess.run([*mixed, "--reuse", str(memory)], capture_output=True, text=True)
    assert refused.returncode != 0 and "replayed another way" in refused.stderr
    assert json.loads(database.read_text())["truth"] == result["truth"]


def test_online_calibration_reads_every_pair_at_every_checkpoint(tmp_path):
    """The hand-made file's truth separates all 10 pairs of its 5 systems; one seed reads
    them at 4 checkpoints, and a ranking this clear is never misordered past z = 1."""
    ratings = tmp_path / "ratings.csv"
    write_ratings(ratings)
    command = [sys.executable, str(REPO / "research" / "online_calibration.py")]
    command += ["--ratings", str(ratings), "--criterion", "quality", "--seeds", "1"]
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO)
    lines = done.stdout.splitlines()
    assert lines[0] == "40 pairs read, 0 misordered"
    bands = [line.split() for line in lines[2:]]
    assert sum(int(band[1]) for band in bands) == 40


def test_simulator_bounds_active_composition_with_the_truth_and_weighs_pairs_equally(tmp_path):
    """`guided` (the active rule told the truth's order) replays only in memory; `bt-pairs`
    (Bradley-Terry with every pair's win rate weighed equally) and `cells` (scores compared
    across HITs on the same item) recover the clear ranking."""
    ratings, out = tmp_path / "ratings.csv", tmp_path / "out.json"
    write_ratings(ratings)
    command = [sys.executable, str(REPO / "research" / "simulate_campaign.py")]
    command += ["--ratings", str(ratings), "--criterion", "quality", "--seeds", "2"]
    command += ["--policies", "balanced,guided", "--estimators", "bt,bt-pairs,cells"]
    command += ["--step", "20"]
    refused = subprocess.run([*command, "--json", str(out)], capture_output=True, text=True)
    assert refused.returncode != 0 and "add --in-memory" in refused.stderr
    assert not out.exists()
    subprocess.run([*command, "--in-memory", "--json", str(out)], check=True, capture_output=True)
    result = json.loads(out.read_text())
    for policy in ("balanced", "guided"):
        for estimator in ("bt", "bt-pairs", "cells"):
            ends = [run["curve"][estimator][-1] for run in result["runs"][policy]]
            assert [end["agreement"] for end in ends] == [1, 1]
            assert all(end["best_alone"] for end in ends)


# One interpreter answers every test that calls the simulator's functions: a snippet arrives
# as a line of JSON and what it printed goes back as one (importing the simulator sets up
# Django and the engines, seconds each time).
SNIPPETS = """
import contextlib, io, json, sys, traceback
import numpy as np
import simulate_campaign as s
for line in sys.stdin:
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(json.loads(line), {"json": json, "np": np, "s": s})
        answer = {"printed": printed.getvalue()}
    except Exception:
        answer = {"error": traceback.format_exc()}
    print(json.dumps(answer), flush=True)
"""


@pytest.fixture(scope="module")
def simulator():
    process = subprocess.Popen(
        [sys.executable, "-c", SNIPPETS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO / "research",
        env={**os.environ, "PYTHONPATH": str(REPO / "research")},
    )
    yield process
    process.stdin.close()
    process.wait(timeout=60)


@pytest.fixture
def in_simulator(simulator):
    """What `code` prints, as JSON, run with the simulator imported as `s`."""

    def run(code: str):
        simulator.stdin.write(json.dumps(code) + "\n")
        simulator.stdin.flush()
        answer = json.loads(simulator.stdout.readline() or '{"error": "the interpreter exited"}')
        assert "error" not in answer, answer["error"]
        return json.loads(answer["printed"])

    return run


def test_pair_weighting_gives_every_pair_the_same_total(in_simulator):
    """Pair 0-1 met 30 times (20 wins to 10), pair 0-2 3 times (2 to 1), 1-2 never: both
    that met count the mean, 16.5 comparisons, with their own win rates."""
    weighted = in_simulator(
        "w = np.array([[[0, 20, 2], [10, 0, 0], [1, 0, 0]]], float);"
        "print(json.dumps(s.pair_weighted(w)[0].round(3).tolist()))"
    )
    assert weighted == [[0, 11.0, 11.0], [5.5, 0, 0], [5.5, 0, 0]]


def test_same_mean_reads_the_hits_balanced_needs_for_a_policy_s_mean_agreement(in_simulator):
    """Balanced's mean goes 0.5, 0.7, 0.9 at 100, 200, 300 HITs; a policy at 0.8 after
    100 HITs is where balanced is at 250: a ratio of 0.4. One never as good as balanced's
    first checkpoint is credited with it; one better than balanced ever is has no ratio."""
    runs = {
        "balanced": [[0.4, 0.6, 0.9], [0.6, 0.8, 0.9]],
        "policy": [[0.8, 0.95, 0.3], [0.8, 0.95, 0.3]],
    }
    as_runs = {
        name: [
            {"curve": {"bt": [{"hits": 100 * (i + 1), "agreement": a} for i, a in enumerate(c)]}}
            for c in curves
        ]
        for name, curves in runs.items()
    }
    rows = in_simulator(
        f"runs = {as_runs!r};print(json.dumps(s.same_mean(runs['policy'], runs['balanced'], 'bt')))"
    )
    assert [row["balanced_hits"] for row in rows] == [pytest.approx(250), None, 100]
    assert [row["ratio"] for row in rows] == [pytest.approx(0.4), None, 3]


def test_cells_compare_scores_across_hits_on_the_same_item(in_simulator):
    """b and c never share a HIT, but both were scored on item 0: c's 2 beats b's 1, so
    `cells` puts c above b, where Bradley-Terry on the HITs' comparisons (each lost once to
    a) cannot tell them apart. Once b also has a 2.5 there, b beats c half the time: a tie."""
    code = (
        "o = s.Oracle(['a', 'b', 'c'], [('x', {})], {(0, 0): '', (0, 1): '', (0, 2): ''},"
        " {}, {}, 0, 2);"
        "hits = [(0, [0, 1], [3.0, 1.0]), (0, [0, 2], [3.0, 2.0])];"
        "apart, _ = s.cells_ranking(hits, o, 20, 0);"
        "bt, _ = s.ranked(hits, s.comparisons_of(hits), o, 'bt', 0);"
        "tied, _ = s.cells_ranking(hits + [(0, [1, 0], [2.5, 3.0])], o, 20, 0);"
        "print(json.dumps([apart.tolist(), bt.tolist(), tied.tolist()]))"
    )
    apart, bt, tied = in_simulator(code)
    assert apart[0] > apart[2] > apart[1]
    assert bt[0] > bt[1] and bt[1] == pytest.approx(bt[2])
    assert tied[1] == pytest.approx(tied[2])


def test_simulator_refuses_an_estimator_it_does_not_have(tmp_path):
    command = [sys.executable, str(REPO / "research" / "simulate_campaign.py")]
    command += ["--ratings", str(tmp_path / "r.csv"), "--criterion", "quality"]
    command += ["--estimators", "bt,elo", "--json", str(tmp_path / "out.json")]
    refused = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert refused.returncode != 0 and "no estimator elo" in refused.stderr
    assert not (tmp_path / "out.json").exists()


def test_cross_hit_scores_count_pairs_of_scores_by_source_and_split_halves(tmp_path):
    """In the hand-made file every system scores the same on every item, and each item's 5
    HITs are by 5 annotators: every pair of scores agrees with the order, from the same HIT
    or another annotator's, none come from one annotator's other HITs, and any two halves
    of the HITs order every pair alike."""
    ratings = tmp_path / "ratings.csv"
    write_ratings(ratings)
    command = [sys.executable, str(REPO / "research" / "cross_hit_scores.py")]
    command += ["--ratings", str(ratings), "--criterion", "quality"]
    done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=REPO)
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines())
    # Per item 15 scores, 3 per system: C(15, 2) = 105 pairs, 5 x 3 in one HIT, 5 x 3 of one
    # system. 12 items: 180 from one HIT, 900 from two.
    assert lines["same HIT"].startswith("180 pairs of scores; agree 1.000, disagree 0.000")
    assert lines["other annotator"].startswith("900 pairs of scores; agree 1.000")
    assert lines["other HIT, same annotator"] == "no pairs of scores"
    assert "information per pair inf" in lines["simulated, same HIT"]
    for estimator in ("Bradley-Terry", "cells"):
        assert lines[f"split-half, {estimator}"].startswith("the halves order 1.000 of the pairs")


def test_the_model_oracle_answers_as_bradley_terry_says(in_simulator):
    """Two systems 0.5 nats apart at scale 1.4: the first wins logistic(0.7) of the time,
    whoever else is shown, on any item."""
    code = (
        "import random;"
        "o = s.ModelOracle(['a', 'b'], [('x', {}), ('y', {})], {}, {}, {}, 0, 2,"
        " strength=1.4 * np.array([0.5, 0.0]));"
        "rng = random.Random(0);"
        "wins = sum(o.score(n % 2, 0, rng) > o.score(n % 2, 1, rng) for n in range(40000));"
        "print(json.dumps(wins / 40000))"
    )
    assert in_simulator(code) == pytest.approx(1 / (1 + math.exp(-0.7)), abs=0.008)


def test_simulator_replays_with_the_model_oracle_against_the_file_s_clusters(tmp_path):
    """--oracle model keeps the file's truth's clusters and takes the model's own order; its
    runs are never taken for runs of the file's oracle."""
    ratings, model, file_runs = tmp_path / "ratings.csv", tmp_path / "m.json", tmp_path / "f.json"
    write_ratings(ratings)
    command = [sys.executable, str(REPO / "research" / "simulate_campaign.py")]
    command += ["--ratings", str(ratings), "--criterion", "quality", "--seeds", "1"]
    command += ["--estimators", "bt", "--step", "20", "--in-memory", "--policies", "balanced"]
    subprocess.run([*command, "--json", str(file_runs)], check=True, capture_output=True)
    as_model = [*command, "--oracle", "model", "--model-scale", "3", "--json", str(model)]
    subprocess.run(as_model, check=True, capture_output=True)
    result, of_file = json.loads(model.read_text()), json.loads(file_runs.read_text())
    assert result["oracle"] == "model, scale 3.0" and of_file["oracle"] == "file"
    assert result["truth"]["cluster"] == of_file["truth"]["cluster"]
    assert result["truth"]["pairs_in_different_clusters"] == 10
    truth = dict(zip(result["truth"]["systems"], result["truth"]["rating"], strict=True))
    assert sorted(truth, key=truth.get, reverse=True) == list(SYSTEMS)
    assert result["truth"]["pairs_the_implied_rating_orders_otherwise"] == []
    mixed = [*command, "--oracle", "model", "--json", str(tmp_path / "x.json")]
    refused = subprocess.run([*mixed, "--reuse", str(file_runs)], capture_output=True, text=True)
    assert refused.returncode != 0 and "replayed another way" in refused.stderr


def test_the_designed_policy_follows_a_fixed_design_item_by_item(in_simulator, tmp_path):
    """Every item: HIT (best, good, mid) for three quarters of its HITs, (mid, low, bad) for
    the rest. 48 HITs over 12 items: 4 per item, exactly 3 and 1; refused without a design."""
    ratings, design = tmp_path / "ratings.csv", tmp_path / "design.json"
    write_ratings(ratings)
    design.write_text(
        json.dumps(
            {
                "item": [item for item in range(12) for _ in range(2)],
                "systems": [[0, 1, 2], [2, 3, 4]] * 12,
                "share": [0.75, 0.25] * 12,
            }
        )
    )
    code = (
        "from pathlib import Path; from collections import Counter;"
        f"o = s.Oracle.read(Path({str(ratings)!r}), 'quality');"
        f"hits = s.replay_in_memory(o, 48, 0, s.DESIGNED, design=s.Design(Path({str(design)!r})));"
        "per_item = Counter((item, tuple(systems)) for item, systems, _ in hits);"
        "print(json.dumps(sorted(set(per_item.values())) + [len({i for i, _ in per_item})]))"
    )
    assert in_simulator(code) == [1, 3, 12]
    command = [sys.executable, str(REPO / "research" / "simulate_campaign.py")]
    command += ["--ratings", str(ratings), "--criterion", "quality", "--in-memory"]
    command += ["--policies", "balanced,designed", "--json", str(tmp_path / "out.json")]
    refused = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert refused.returncode != 0 and "add --in-memory and --design" in refused.stderr
    done = subprocess.run([*command, "--design", str(design), "--estimators", "bt"], cwd=REPO)
    assert done.returncode == 0


def test_the_plot_draws_agreement_and_misordered_pairs(in_simulator, tmp_path):
    """Two policies, two seeds, three checkpoints: a PNG with both panels."""
    out = tmp_path / "plot.png"
    code = (
        "curve = lambda a: {'bt': [{'hits': h, 'agreement': x} for h, x in zip([10, 20, 30], a)]};"
        "runs = {'balanced': [{'curve': curve([0.8, 0.9, 1.0])},"
        " {'curve': curve([0.7, 0.9, 0.9])}],"
        " 'active': [{'curve': curve([0.9, 0.9, 1.0])}, {'curve': curve([0.8, 1.0, 1.0])}]};"
        f"s.plot(__import__('pathlib').Path({str(out)!r}), runs, {{'bt': {{'target': 0.9}}}},"
        " 'bt', 'test', 10);"
        "print(json.dumps(True))"
    )
    assert in_simulator(code) is True
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
