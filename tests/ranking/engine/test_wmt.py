import csv
import math
from functools import cache

import numpy as np
import pandas as pd
import pytest

from ranking.engine import Judgments, wmt_protocol, z_scores
from ranking.engine.wmt import cluster_spans, clusters_in_order
from tests.ranking.engine.test_e2e_quality import QUALITY_CSV


def test_z_scores_by_hand():
    # Annotator 7: 50, 100, 150 -> mean 100, sd 50. Annotator 8: 10, 30 -> mean 20,
    # sd sqrt(200). Annotator 9 judged once; annotator 5 gave 100 twice: no sd, left out.
    judgments = Judgments(
        system=[0, 1, 2, 0, 1, 2, 0, 1],
        annotator=[7, 7, 7, 8, 8, 9, 5, 5],
        score=[50, 100, 150, 10, 30, 80, 100, 100],
    )
    z = z_scores(judgments)
    half_root_two = 1 / math.sqrt(2)
    assert z[:5] == pytest.approx([-1.0, 0.0, 1.0, -half_root_two, half_root_two])
    assert np.isnan(z[5:]).all()


def test_mean_z_per_system_by_hand():
    judgments = Judgments(
        system=[0, 1, 2, 0, 1, 2, 0, 1],
        annotator=[7, 7, 7, 8, 8, 9, 5, 5],
        score=[50, 100, 150, 10, 30, 80, 100, 100],
    )
    ranking = wmt_protocol(judgments, 3)
    half_root_two = 1 / math.sqrt(2)
    expected = [(-1 - half_root_two) / 2, half_root_two / 2, 1.0]
    assert ranking.mean_z == pytest.approx(expected)
    assert ranking.mean_raw.tolist() == [30.0, 65.0, 150.0]  # of the judgments with a z
    assert ranking.n_judgments.tolist() == [2, 2, 1]
    assert ranking.order.tolist() == [2, 1, 0]
    assert ranking.left_out == 3


def known_order_hits() -> tuple[np.ndarray, np.ndarray]:
    """Four systems, each HIT by its own annotator: A first, B and C alike (B slightly
    ahead), D last."""
    hits = [[300, 120, 80, 10]] * 11 + [[300, 80, 120, 10]] * 9
    hits += [[90, 100, 80, 10], [90, 80, 100, 10], [300, 5, 100, 10], [300, 100, 5, 10]]
    return np.tile(np.arange(4), (len(hits), 1)), np.array(hits, dtype=float)


def test_known_order_gives_wilcoxon_clusters():
    systems, scores = known_order_hits()
    ranking = wmt_protocol(Judgments.from_hits(systems, scores, np.arange(len(scores))), 4)
    assert ranking.order.tolist() == [0, 1, 2, 3]
    assert ranking.cluster.tolist() == [1, 2, 2, 3]
    assert ranking.rank_lo.tolist() == [1, 2, 2, 4]
    assert ranking.rank_hi.tolist() == [1, 3, 3, 4]
    assert ranking.n_judgments.tolist() == [24] * 4 and ranking.left_out == 0


def test_a_boundary_needs_a_system_better_than_every_system_below_it():
    rng = np.random.default_rng(0)
    high, low = rng.normal(1.0, 0.1, 50), rng.normal(-1.0, 0.1, 50)
    odd = np.array([2.0, -3.0])  # mean -0.5: between them, but too few to tell apart
    assert clusters_in_order([high, low]).tolist() == [1, 2]
    assert clusters_in_order([high, odd, low]).tolist() == [1, 1, 1]


def test_cluster_spans_are_the_positions_of_each_cluster():
    lo, hi = cluster_spans(np.array([1, 2, 2, 2, 3]))
    assert (lo.tolist(), hi.tolist()) == ([1, 2, 2, 2, 5], [1, 4, 4, 4, 5])


def test_systems_without_z_scores_are_left_unranked():
    judgments = Judgments(system=[0, 1, 2], annotator=[1, 1, 2], score=[10.0, 20.0, 30.0])
    ranking = wmt_protocol(judgments, 3)
    assert ranking.order.tolist() == [1, 0]
    assert np.isnan(ranking.mean_z[2]) and ranking.cluster[2] == 0
    assert ranking.left_out == 1


def test_judgments_from_hits_skip_empty_slots():
    systems = np.array([[0, 1, -1], [2, 0, 1]])
    scores = np.array([[10.0, 20.0, np.nan], [5.0, 6.0, 7.0]])
    judgments = Judgments.from_hits(systems, scores, np.array([40, 41]))
    assert judgments.system.tolist() == [0, 1, 2, 0, 1]
    assert judgments.annotator.tolist() == [40, 40, 41, 41, 41]
    assert judgments.score.tolist() == [10.0, 20.0, 5.0, 6.0, 7.0]


@cache
def quality_judgments() -> tuple[list[str], Judgments]:
    if not QUALITY_CSV.exists():
        pytest.skip(f"E2E ratings not found at {QUALITY_CSV}: ../shared is absent")
    names: dict[str, int] = {}
    workers: dict[str, int] = {}
    systems, scores, annotators = [], [], []
    with QUALITY_CSV.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            systems.append([names.setdefault(row[f"sys{i}"], len(names)) for i in range(1, 6)])
            scores.append([float(row[f"quality{i}"]) for i in range(1, 6)])
            annotators.append(workers.setdefault(row["_worker_id"], len(workers)))
    judged = Judgments.from_hits(np.array(systems), np.array(scores), np.array(annotators))
    return list(names), judged


def pandas_mean_z(names: list[str], judgments: Judgments) -> tuple[np.ndarray, int]:
    """WMT's "Ave z" by pandas, as the findings describe it: each worker's scores standardised
    by the worker's mean and sample standard deviation, the workers who gave one score or
    the same score throughout left out; then the mean z of each system. Returns it in the
    order of `names`, with the number of judgments left out."""
    rows = pd.DataFrame(
        {"worker": judgments.annotator, "system": judgments.system, "score": judgments.score}
    )
    worker = rows.groupby("worker")["score"]
    kept = rows[worker.transform("nunique") > 1].copy()
    by_worker = kept.groupby("worker")["score"]
    kept["z"] = (kept["score"] - by_worker.transform("mean")) / by_worker.transform("std")
    mean_z = kept.groupby("system")["z"].mean().reindex(range(len(names)))
    return mean_z.to_numpy(), len(rows) - len(kept)


def test_e2e_quality_wmt_view():
    """On the released ratings: 1,100 judgments, those of the 7 workers (of 112) who gave
    every output the same score, have no z-score; tuda, slug and dangnt lead; chen and
    sheff2 trail, alone in the last cluster. Every system's mean z is the one pandas
    computes from the file."""
    names, judgments = quality_judgments()
    ranking = wmt_protocol(judgments, len(names))
    order = [names[i] for i in ranking.order]
    assert len(order) == 21 and ranking.left_out == 1100
    assert order[:3] == ["tuda", "slug", "dangnt"] and order[-2:] == ["chen", "sheff2"]
    last = ranking.cluster == ranking.cluster.max()
    assert sorted(names[i] for i in np.flatnonzero(last)) == ["chen", "sheff2"]
    expected, left_out = pandas_mean_z(names, judgments)
    assert left_out == ranking.left_out
    np.testing.assert_allclose(ranking.mean_z, expected, rtol=1e-9)
    constant = pd.Series(judgments.score).groupby(judgments.annotator).nunique() == 1
    assert (constant.sum(), len(constant)) == (7, 112)
