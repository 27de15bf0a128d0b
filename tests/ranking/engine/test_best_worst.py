"""Best-worst scaling of RankME HITs (ranking/engine/best_worst.py)."""

import warnings

import numpy as np
import pytest
from scipy.stats import f_oneway, tukey_hsd

from ranking.engine.best_worst import TukeyPValues, best_worst_protocol, best_worst_values
from ranking.engine.judgments import Judgments


def judgments(systems, scores) -> Judgments:
    systems, scores = np.array(systems), np.array(scores, dtype=np.float64)
    return Judgments.from_hits(systems, scores, np.zeros(len(systems)))


def test_best_and_worst_of_each_hit_ties_counted_and_equal_hits_naming_neither():
    shown = judgments([[0, 1, 2], [0, 1, 2], [0, 1, 2]], [[3, 2, 1], [5, 5, 1], [4, 4, 4]])
    assert best_worst_values(shown).tolist() == [1, 0, -1, 1, 1, -1, 0, 0, 0]


def test_score_is_100_times_best_minus_worst_over_judgments():
    shown = judgments(
        [[0, 1, 2], [0, 1, 2], [0, 2, 1], [1, 0, 2]] * 5,
        [[3, 2, 1], [5, 5, 1], [9, 1, 1], [1, 9, 4]] * 5,
    )
    ranking = best_worst_protocol(shown, 3)
    assert ranking.best.tolist() == [20, 5, 0] and ranking.worst.tolist() == [0, 10, 15]
    assert ranking.score.tolist() == [100.0, -25.0, -75.0]
    assert ranking.order.tolist() == [0, 1, 2]
    assert ranking.cluster.tolist() == [1, 2, 3]  # every step of 20 judgments is significant


def test_clusters_follow_anova_then_tukey_as_scipy_computes_them():
    rng = np.random.default_rng(3)
    systems = np.array([rng.permutation(4)[:3] for _ in range(60)])
    strength = np.array([2.0, 1.6, 0.4, 0.0])
    scores = strength[systems] + rng.normal(0, 1, systems.shape)
    shown = judgments(systems, scores)
    ranking = best_worst_protocol(shown, 4)
    values = best_worst_values(shown)
    groups = [values[shown.system == s] for s in range(4)]
    assert f_oneway(*groups).pvalue < 0.05
    p = tukey_hsd(*groups).pvalue
    order = ranking.order.tolist()
    for position, upper in enumerate(order[:-1]):
        below = order[position + 1 :]
        ends = all(
            groups[upper].mean() > groups[lower].mean() and p[upper, lower] < 0.05
            for lower in below
        )
        step = ranking.cluster[order[position + 1]] - ranking.cluster[upper]
        assert step == int(ends), (upper, below)


def test_a_system_with_one_judgment_is_never_found_different():
    shown = judgments([[0, 1]] * 10 + [[2, 0]], [[9, 1]] * 10 + [[9, 1]])
    ranking = best_worst_protocol(shown, 3)
    assert ranking.n_judgments.tolist() == [11, 10, 1]
    # 2 was best once (score 100), 0 best 10 of 11: neither is found better than the other.
    assert ranking.cluster[2] == ranking.cluster[0] == 1 and ranking.cluster[1] == 2


def test_systems_without_judgments_get_no_place():
    ranking = best_worst_protocol(judgments([[0, 1]] * 5, [[2, 1]] * 5), 3)
    assert ranking.order.tolist() == [0, 1]
    assert ranking.cluster.tolist() == [1, 2, 0] and np.isnan(ranking.score[2])


def test_needs_the_hits_of_the_judgments():
    flat = Judgments(np.array([0, 1]), np.array([0, 0]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="need their hit"):
        best_worst_protocol(flat, 2)


@pytest.mark.parametrize(
    "sizes, shift",
    [([40] * 6, 0.3), ([5, 9, 30, 2, 17, 60], 0.2), ([300] * 8, 0.05), ([3, 3, 4], 0.0)],
)
def test_tukey_p_values_asked_one_by_one_equal_scipys_matrix(sizes, shift):
    rng = np.random.default_rng(len(sizes))
    samples = [
        np.clip(np.round(rng.normal(shift * i, 0.8, size)), -1, 1) for i, size in enumerate(sizes)
    ]
    whole = tukey_hsd(*samples).pvalue
    one_by_one = TukeyPValues(samples)
    asked = [[one_by_one(i, j) for j in range(len(sizes))] for i in range(len(sizes))]
    np.testing.assert_array_equal(np.array(asked), whole)


def test_tukey_p_values_of_constant_groups_are_scipys_too():
    samples = [np.ones(4), np.zeros(5), np.zeros(3), -np.ones(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = tukey_hsd(*samples).pvalue
    one_by_one = TukeyPValues(samples)
    asked = [[one_by_one(i, j) for j in range(4)] for i in range(4)]
    np.testing.assert_array_equal(np.array(asked), whole)
