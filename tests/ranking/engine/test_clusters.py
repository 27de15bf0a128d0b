import numpy as np
import pytest

from ranking.engine.clusters import clusters, rank_ranges, ranks_per_run, trimmed_per_end


def test_trimmed_per_end_for_200_runs_is_5():
    # Computed in exact arithmetic; wmt-trueskill's float formula agrees up to R = 5000.
    assert trimmed_per_end(200) == 5


@pytest.mark.parametrize(
    ("runs", "drop"), [(1, 0), (2, 0), (3, 1), (10, 1), (40, 1), (41, 2), (100, 3), (1000, 25)]
)
def test_trimmed_per_end_small_and_large_runs(runs, drop):
    assert trimmed_per_end(runs) == drop


def test_ranks_per_run_gives_rank_1_to_highest_mu():
    mu = np.array([[0.1, 0.3, 0.2], [0.5, 0.5, -1.0]])
    assert ranks_per_run(mu).tolist() == [[3, 1, 2], [1, 2, 3]]


def test_rank_ranges_drop_five_from_each_end_of_200():
    # Order 0 > 1 > 2 in 195 runs and 1 > 2 > 0 in 5: the 5 outliers are trimmed away.
    mu = np.tile([3.0, 2.0, 1.0], (200, 1))
    mu[:5] = [1.0, 3.0, 2.0]
    lo, hi = rank_ranges(mu)
    assert (lo.tolist(), hi.tolist()) == ([1, 2, 3], [1, 2, 3])
    mu[5] = [1.0, 3.0, 2.0]  # a sixth outlier is not
    lo, hi = rank_ranges(mu)
    assert (lo.tolist(), hi.tolist()) == ([1, 1, 2], [3, 2, 3])


def test_rank_ranges_small_runs():
    mu = np.array([[3.0, 2.0, 1.0], [2.0, 3.0, 1.0], [3.0, 1.0, 2.0]])
    lo, hi = rank_ranges(mu)  # R = 3: one dropped from each end, the median is left
    assert (lo.tolist(), hi.tolist()) == ([1, 2, 3], [1, 2, 3])
    lo, hi = rank_ranges(mu[:1])
    assert (lo.tolist(), hi.tolist()) == ([1, 2, 3], [1, 2, 3])


def test_clusters_all_separate():
    cluster = clusters(np.array([0.3, 0.2, 0.1]), np.array([1, 2, 3]), np.array([1, 2, 3]))
    assert cluster.tolist() == [1, 2, 3]


def test_clusters_all_in_one():
    cluster = clusters(np.array([0.3, 0.2, 0.1]), np.array([1, 1, 2]), np.array([3, 3, 3]))
    assert cluster.tolist() == [1, 1, 1]


def test_clusters_single_system():
    assert clusters(np.array([0.0]), np.array([1]), np.array([1])).tolist() == [1]


def test_clusters_boundary_needs_every_system_below_to_be_worse():
    # Ordered by mu: A(1-2) B(1-3) C(4-4) D(2-5). B's worst (3) is not better than D's
    # best (2), so no boundary below B even though C is clearly worse.
    mean_mu = np.array([0.4, 0.3, 0.2, 0.1])
    lo, hi = np.array([1, 1, 4, 2]), np.array([2, 3, 4, 5])
    assert clusters(mean_mu, lo, hi).tolist() == [1, 1, 1, 1]
    # D moves up to 4-5: boundaries below B, and C (4-4) shares with D.
    lo[3] = 4
    assert clusters(mean_mu, lo, hi).tolist() == [1, 1, 2, 2]


def test_clusters_given_in_system_order_not_mu_order():
    mean_mu = np.array([0.1, 0.3, 0.2])
    cluster = clusters(mean_mu, np.array([3, 1, 2]), np.array([3, 1, 2]))
    assert cluster.tolist() == [3, 1, 2]


def test_clusters_ties_in_mean_mu_keep_index_order():
    # Systems 0 and 1 tie on mean mu; stable order puts 0 first, so the boundary falls
    # below system 0 (worst rank 1) and system 1 starts the second cluster.
    mean_mu = np.array([0.2, 0.2, 0.0])
    cluster = clusters(mean_mu, np.array([1, 2, 2]), np.array([1, 3, 3]))
    assert cluster.tolist() == [1, 2, 2]
