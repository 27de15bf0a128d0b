"""research/best_design.py: the normal approximation, its gradient, the design spaces and
the best design, on hand-made ratings (no Django: the module loads the simulator only in
main)."""

import functools
import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "research"))
import best_design  # noqa: E402


def every_pair(n: int) -> np.ndarray:
    return np.array([(i, j) for i in range(n) for j in range(i + 1, n)])


def test_two_systems_are_misordered_as_the_normal_approximation_says():
    """One pair, gap 0.1 nats, 400 comparisons: the estimate's variance is 1 / (400 q)."""
    problem = best_design.Problem(np.array([0.1, 0.0]), every_pair(2))
    value, _ = problem.expected_misordered(np.array([1.0]), 400)
    q = expit(0.1) * expit(-0.1)
    assert value == pytest.approx(norm.cdf(-0.1 * math.sqrt(400 * q)))


def test_the_gradient_is_the_finite_difference():
    rng = np.random.default_rng(3)
    problem = best_design.Problem(rng.normal(0, 0.3, 6), every_pair(6)[::2])
    share = rng.dirichlet(np.ones(problem.n_pairs))
    _, gradient = problem.expected_misordered(share, 500)
    step = 1e-7
    for p in range(problem.n_pairs):
        moved = share.copy()
        moved[p] += step
        up, _ = problem.expected_misordered(moved, 500)
        moved[p] -= 2 * step
        down, _ = problem.expected_misordered(moved, 500)
        assert gradient[p] == pytest.approx((up - down) / (2 * step), rel=1e-4, abs=1e-9)


@pytest.mark.research  # a design search of 40 s: with the studies, when asked
def test_the_best_design_spends_on_the_near_tie_and_needs_far_fewer_hits():
    """Four systems a nat apart but for one pair 0.05 apart: the best allocation gives that
    pair most comparisons, and reaches the uniform design's expected misorderings with well
    under half its HITs."""
    rating = np.array([3.0, 2.0, 1.0, 0.95])
    problem = best_design.Problem(rating, every_pair(4))
    space = best_design.any_pairs(problem, k=2)
    uniform = space.share(space.uniform())
    level, _ = problem.expected_misordered(uniform, 1000)
    value, weight = space.best(problem.expected_misordered, 1000)
    share = space.share(weight)
    assert share.sum() == pytest.approx(1.0)
    assert problem.pair_index()[2, 3] == int(np.argmax(share))
    assert share.max() > 0.5
    assert value < level
    grid = [100.0 * n for n in range(1, 11)]
    needed = best_design.hits_for(
        level, best_design.best_curve(space, problem.expected_misordered, grid)
    )
    assert needed is not None and needed < 500


def test_item_hits_list_each_item_s_hits_and_keep_items_balanced():
    """Item 0 has systems 0, 1, 2 and item 1 systems 1, 2, 3; HITs of 2. The uniform design
    shows pair (1, 2) on both items, so it gets twice the others' share. Systems 1 and 2
    are the close pair: the best design shows them together more, within each item's half
    of the HITs."""
    problem = best_design.Problem(np.array([0.0, 2.0, 2.3, 4.5]), every_pair(4))
    space = best_design.item_hits(problem, [[0, 1, 2], [2, 1, 3]], k=2)
    assert space.pairs_of.shape == (6, 6)
    index = problem.pair_index()
    uniform = space.share(space.uniform())
    assert uniform[index[1, 2]] == pytest.approx(1 / 3)
    assert uniform[index[0, 1]] == pytest.approx(1 / 6)
    assert uniform[index[0, 3]] == 0
    _, weight = space.best(problem.expected_misordered, 200, iterations=300)
    assert np.bincount(space.group, weights=weight) == pytest.approx([0.5, 0.5])
    assert space.share(weight)[index[1, 2]] > 1 / 3


def test_item_hits_are_left_out_when_there_are_too_many_to_list():
    problem = best_design.Problem(np.zeros(8), every_pair(8))
    outputs = [list(range(8))]
    assert best_design.item_hits(problem, outputs, k=4, max_subsets=60) is None  # 70 HITs
    assert best_design.item_hits(problem, outputs, k=5, max_subsets=60) is not None  # 56


def test_hits_for_interpolates_the_logarithm_and_says_when_out_of_reach():
    curve = [(100.0, 8.0), (200.0, 2.0), (300.0, 1.0)]
    assert best_design.hits_for(4.0, curve) == pytest.approx(150.0)
    assert best_design.hits_for(9.0, curve) == 100.0
    assert best_design.hits_for(0.5, curve) is None


def test_misordered_counts_are_the_poisson_binomial_and_each_can_be_left_out():
    chance = np.array([0.5, 0.1, 0.3, 0.02, 0.45])
    exact = np.zeros(len(chance) + 1)
    for outcome in itertools.product([0, 1], repeat=len(chance)):
        exact[sum(outcome)] += np.prod(np.where(outcome, chance, 1 - chance))
    counts = best_design.misordered_counts(chance, 2)
    assert counts == pytest.approx(exact[:3])
    rest = best_design.without_each(counts, chance)
    for event in range(len(chance)):
        others = best_design.misordered_counts(np.delete(chance, event), 2)
        assert rest[event] == pytest.approx(others, abs=1e-12)


def test_the_target_s_gradient_is_the_finite_difference():
    rng = np.random.default_rng(5)
    problem = best_design.Problem(rng.normal(0, 0.2, 6), every_pair(6))
    share = rng.dirichlet(np.ones(problem.n_pairs))
    value, gradient = problem.more_misordered_than(2, share, 300)
    assert 0.05 < value < 0.95  # where the target is in doubt, the gradient is not flat
    step = 1e-7
    for p in range(problem.n_pairs):
        moved = share.copy()
        moved[p] += step
        up, _ = problem.more_misordered_than(2, moved, 300)
        moved[p] -= 2 * step
        down, _ = problem.more_misordered_than(2, moved, 300)
        assert gradient[p] == pytest.approx((up - down) / (2 * step), rel=1e-4, abs=1e-9)


def test_pairs_with_no_system_in_common_are_misordered_independently():
    """Systems 0-1 and 2-3 compared only within their pair: the sampled chance of missing
    'both right' is the independent one, 1 - (1 - p01)(1 - p23)."""
    problem = best_design.Problem(np.array([0.1, 0.0, 0.3, 0.0]), np.array([[0, 1], [2, 3]]))
    share = np.zeros(problem.n_pairs)
    index = problem.pair_index()
    share[index[0, 1]] = share[index[2, 3]] = 0.5
    independent, _ = problem.more_misordered_than(0, share, 200)
    chance, _ = problem.misordering(share, 200)
    assert independent == pytest.approx(1 - (1 - chance[0]) * (1 - chance[1]))
    sampled = best_design.sampled_more_misordered_than(problem, 0, share, 200, 40_000, seed=1)
    assert sampled == pytest.approx(independent, abs=0.01)


def test_the_best_design_for_the_target_spends_on_the_near_tie():
    rating = np.array([3.0, 2.0, 1.0, 0.95])
    problem = best_design.Problem(rating, every_pair(4))
    space = best_design.any_pairs(problem, k=2)
    missing = functools.partial(problem.more_misordered_than, 0)
    level, _ = missing(space.share(space.uniform()), 1000)
    value, weight = space.best(missing, 1000)
    assert value < level
    assert problem.pair_index()[2, 3] == int(np.argmax(space.share(weight)))


def test_a_saved_design_names_each_item_and_its_hits_shares(tmp_path):
    """Items 7 and 9 (the oracle's indices), the second with one HIT: the design writes each
    HIT with its item and its share of that item's HITs."""
    problem = best_design.Problem(np.array([0.0, 2.0, 2.3, 4.5]), every_pair(4))
    space = best_design.item_hits(problem, [[0, 1, 2], [3, 1]], k=2)
    assert space.hits == [(0, 1), (0, 2), (1, 2), (1, 3)]
    weight = space.normalised(np.array([1.0, 1.0, 2.0, 5.0]))
    best_design.save_design(tmp_path / "d.json", space, weight, [7, 9])
    design = json.loads((tmp_path / "d.json").read_text())
    assert design["item"] == [7, 7, 7, 9]
    assert design["systems"] == [[0, 1], [0, 2], [1, 2], [1, 3]]
    assert design["share"] == pytest.approx([0.25, 0.25, 0.5, 1.0])
