import numba
import numpy as np
import pytest
import trueskill

from ranking.engine.comparisons import Comparisons
from ranking.engine.trueskill import rate_1vs1
from ranking.engine.trueskill_kernels import _draw_opponent, _max_var_system, pair_pools
from ranking.engine.trueskill_runs import bootstrap_protocol, e2e_params, e2e_protocol

PROTOCOLS = [e2e_protocol, bootstrap_protocol]


def make_comparisons(n_systems: int = 6, n: int = 3000, seed: int = 1) -> Comparisons:
    """Random games between systems of increasing strength, about a fifth drawn."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_systems, n)
    b = (a + rng.integers(1, n_systems, n)) % n_systems
    p_a = 1 / (1 + np.exp((b - a) * 0.3))
    a_wins = rng.random(n) < p_a
    winner, loser = np.where(a_wins, a, b), np.where(a_wins, b, a)
    return Comparisons(winner, loser, rng.random(n) < 0.2)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_protocol_same_seed_same_result(protocol):
    c = make_comparisons()
    first, second = protocol(c, 6, 8, seed=42), protocol(c, 6, 8, seed=42)
    assert np.array_equal(first.mu, second.mu) and np.array_equal(first.sigma, second.sigma)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_protocol_different_seed_different_result(protocol):
    c = make_comparisons()
    assert not np.array_equal(protocol(c, 6, 8, seed=1).mu, protocol(c, 6, 8, seed=2).mu)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_protocol_result_independent_of_chunking(protocol):
    c = make_comparisons()
    whole = protocol(c, 6, 10, seed=3)
    calls = []
    chunked = protocol(c, 6, 10, seed=3, chunk_runs=3, progress=lambda *a: calls.append(a))
    assert np.array_equal(whole.mu, chunked.mu)
    assert calls == [(3, 10), (6, 10), (9, 10), (10, 10)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_protocol_result_independent_of_threads(protocol):
    c = make_comparisons()
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = protocol(c, 6, 6, seed=4)
    finally:
        numba.set_num_threads(threads)
    assert np.array_equal(one.mu, protocol(c, 6, 6, seed=4).mu)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_protocol_accepts_generator(protocol):
    c = make_comparisons()
    result = protocol(c, 6, 4, seed=np.random.default_rng(5))
    assert result.seed is None
    assert np.array_equal(result.mu, protocol(c, 6, 4, seed=5).mu)


def test_e2e_protocol_single_comparison_matches_package():
    # One comparison: every one of the N = 2 updates applies it, whatever the draws.
    c = Comparisons(np.array([1]), np.array([0]), np.array([False]))
    result = e2e_protocol(c, 2, 3, seed=0)
    r0, r1 = package_ratings_after(2)
    np.testing.assert_allclose(result.mu, [[r0.mu, r1.mu]] * 3, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.sigma, [[r0.sigma, r1.sigma]] * 3, rtol=0, atol=1e-12)
    assert result.n_updates == 2 and result.n_comparisons.tolist() == [1, 1]


def test_unit_bootstrap_applies_each_drawn_units_comparisons_as_the_package():
    # One unit of two comparisons: each run draws it once and applies both, in order.
    c = Comparisons(np.array([1, 1]), np.array([0, 0]), np.array([False, False]), unit=[7, 7])
    result = bootstrap_protocol(c, 2, 3, seed=0)
    r0, r1 = package_ratings_after(2, comparisons=2)
    np.testing.assert_allclose(result.mu, [[r0.mu, r1.mu]] * 3, rtol=0, atol=1e-12)
    assert result.n_comparisons.tolist() == [2, 2]


def test_unit_bootstrap_draws_whole_units():
    # Two units: in one system 1 always wins, in the other system 0. A run that drew single
    # comparisons would mix them; drawing units, each run applies a unit's comparisons
    # whole, so a run's mu moves in steps of whole units.
    c = Comparisons(
        np.array([1, 1, 1, 0, 0, 0]),
        np.array([0, 0, 0, 1, 1, 1]),
        np.zeros(6, bool),
        unit=[0, 0, 0, 1, 1, 1],
    )
    result = bootstrap_protocol(c, 2, 64, seed=1)
    # Each run draws two units: (0, 0), (1, 1) or one of each; the first two push mu one
    # way or the other all the way, so some runs end far from 0 both ways.
    assert result.mu[:, 1].max() > 0.1 and result.mu[:, 1].min() < -0.1
    assert np.isclose(result.mu.sum(axis=1), 0).all()


def package_ratings_after(updates: int, comparisons: int = 1):
    p = e2e_params(comparisons)
    env = trueskill.TrueSkill(p.mu, p.sigma, p.beta, p.tau, p.draw_probability)
    r0, r1 = env.create_rating(), env.create_rating()
    for _ in range(updates):
        r1, r0 = trueskill.rate_1vs1(r1, r0, env=env)
    return r0, r1


def test_e2e_protocol_leaves_system_without_comparisons_alone():
    c = Comparisons(np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([False, False, True]))
    result = e2e_protocol(c, 4, 3, seed=0)
    assert (result.mu[:, 3] == 0).all() and (result.sigma[:, 3] == 0.5).all()
    assert (result.mu[:, :3] != 0).any()


def test_e2e_params_follow_sakaguchi():
    p = e2e_params(29790)
    assert (p.mu, p.sigma, p.tau, p.draw_probability) == (0.0, 0.5, 0.0, 0.25)
    assert p.beta == 0.5 * 29791 / 40


def test_max_var_system_breaks_ties_to_lowest_index_and_skips_inactive():
    var = np.array([0.2, 0.3, 0.3, 0.4])
    assert _max_var_system(var, np.array([True, True, True, True])) == 3
    assert _max_var_system(var, np.array([True, True, True, False])) == 1


def test_draw_opponent_is_proportional_to_exp_minus_mu_gap():
    # System 0 was compared with 1, 2 and 4 but never with 3.
    c = Comparisons(np.array([0, 2, 0, 3]), np.array([1, 0, 4, 1]), np.zeros(4, bool))
    partner = pair_pools(c, 5).partner
    mu = np.array([0.0, 0.5, -1.0, 0.1, 2.0])
    up, down, cum = np.exp(mu), np.exp(-mu), np.empty(5)
    state, draws = np.uint64(99), np.zeros(5)
    n = 40000
    for _ in range(n):
        state, b = _draw_opponent(np.uint64(state), 0, up, down, partner, cum)
        draws[b] += 1
    weights = np.exp(-np.abs(mu)) * partner[0]
    expected = n * weights / weights.sum()
    assert draws[0] == 0 and draws[3] == 0
    assert np.all(np.abs(draws - expected) < 4 * np.sqrt(expected + 1))


def test_pair_pools_hold_each_pairs_comparisons():
    c = Comparisons(np.array([0, 2, 1, 0]), np.array([1, 0, 0, 2]), np.zeros(4, bool))
    pools = pair_pools(c, 3)
    assert pools.counts.tolist() == [[0, 2, 2], [2, 0, 0], [2, 0, 0]]
    start, stop = pools.offsets[1, 0], pools.offsets[1, 0] + pools.counts[0, 1]
    assert sorted(map(sorted, pools.games[start:stop, :2].tolist())) == [[0, 1], [0, 1]]


def test_rate_1vs1_flags_update_the_package_refuses():
    # A huge upset: the package raises FloatingPointError, the engine reports False.
    env = trueskill.TrueSkill()
    with pytest.raises(FloatingPointError):
        trueskill.rate_1vs1(env.create_rating(0, 1), env.create_rating(1000, 1), env=env)
    mu, var = np.array([0.0, 1000.0]), np.array([1.0, 1.0])
    assert not rate_1vs1(mu, var, 0, 1, False, (25 / 6) ** 2, 0.0, 0.74, False)


def test_protocol_rejects_bad_system_index():
    c = Comparisons(np.array([0]), np.array([5]), np.array([False]))
    with pytest.raises(ValueError, match=r"system indices must lie in \[0, 3\)"):
        e2e_protocol(c, 3, 2, seed=0)
