import math
import random
from collections import Counter

import pytest
import trueskill

from nlgdata.composition import (
    ACTIVE,
    ACTIVE_PER_PAIR,
    BALANCED,
    DOUBT_WIDTH,
    ONLINE,
    Candidate,
    comparisons_per_pair,
    compose,
    doubt,
    rate_1vs1,
    rate_hit,
)


def candidates(ratings: dict[int, tuple[float, float] | None], loads=None) -> list[Candidate]:
    loads = loads or {}
    return [Candidate(key, loads.get(key, 0), 0, rating) for key, rating in ratings.items()]


@pytest.mark.parametrize("drawn", [False, True])
def test_rate_1vs1_agrees_with_the_trueskill_package(drawn):
    env = trueskill.TrueSkill(
        mu=0, sigma=1, beta=1, tau=0, draw_probability=ONLINE.draw_probability, backend="scipy"
    )
    a, b = (0.3, 0.8), (-0.2, 0.5)
    for _ in range(5):  # a sequence, so that later games start from updated ratings
        before = env.create_rating(*a), env.create_rating(*b)
        expected = trueskill.rate_1vs1(*before, drawn=drawn, env=env)
        a, b = rate_1vs1(a, b, drawn)
        for mine, theirs in zip((a, b), expected, strict=True):
            assert mine == pytest.approx((theirs.mu, theirs.sigma), abs=1e-9)


def test_rate_hit_makes_every_pair_higher_score_wins():
    ratings: dict = {}
    assert rate_hit(ratings, [(1, 50), (2, 100), (3, 100), (1, 70)]) == 5  # (1, 1) skipped
    assert ratings[2][0] > 0 > ratings[1][0]  # 2 and 3 each beat 1 and drew with the other
    assert ratings[3][0] > 0
    assert all(sigma < ONLINE.sigma0 for _, sigma in ratings.values())


def test_active_chooses_the_two_close_uncertain_systems():
    """Equal loads: the two systems that cannot be told apart, not the clear winner nor the
    systems settled below."""
    estimates = {
        1: (5.0, 0.1),  # the leader, known to be ahead
        2: (1.0, 0.3),  # 2 and 3: close and uncertain
        3: (0.8, 0.3),
        4: (-1.5, 0.1),
        5: (-3.5, 0.1),
    }
    for seed in range(20):
        chosen, policy = compose(candidates(estimates), 2, ACTIVE, 0.0, random.Random(seed))
        assert policy == ACTIVE
        assert {c.key for c in chosen} == {2, 3}


def test_active_weighs_each_load_by_the_doubt_about_its_system():
    """A system in doubt is chosen over a settled one with fewer judgments, but not over one
    with far fewer: every system keeps some doubt (DOUBT_FLOOR)."""
    estimates = {1: (0.0, 0.3), 2: (0.1, 0.3), 3: (4.0, 0.1)}
    chosen, _ = compose(candidates(estimates, {1: 40, 2: 40, 3: 10}), 2, ACTIVE, 0.0)
    assert {c.key for c in chosen} == {1, 2}
    chosen, _ = compose(candidates(estimates, {1: 40, 2: 40, 3: 0}), 2, ACTIVE, 0.0)
    assert 3 in {c.key for c in chosen}


def test_doubt_is_one_for_a_coin_toss_and_falls_with_distance_and_certainty():
    assert doubt((0, 0.5), (0, 0.5)) == 1
    # Rivals stay in doubt well beyond z = 2 (module docstring): exp(-1/2) at DOUBT_WIDTH z.
    z_width = DOUBT_WIDTH * math.sqrt(0.5**2 + 0.5**2)
    assert doubt((0, 0.5), (z_width, 0.5)) == pytest.approx(math.exp(-0.5))
    assert doubt((0, 0.5), (3 * math.sqrt(0.5), 0.5)) > 0.5
    assert doubt((0, 0.5), (0.1, 0.5)) > doubt((0, 0.5), (1.0, 0.5)) > doubt((0, 0.5), (5, 0.5))
    assert doubt((0, 0.5), (0.5, 0.5)) > doubt((0, 0.05), (0.5, 0.05))
    assert doubt((0, 0), (0, 0)) == 1 and doubt((0, 0), (1, 0)) == 0


def test_active_with_no_estimates_yet_takes_any_k():
    chosen, _ = compose(candidates(dict.fromkeys(range(8))), 5, ACTIVE, 0.0, random.Random(1))
    assert len({c.key for c in chosen}) == 5


def test_active_respects_the_balanced_share():
    rng = random.Random(7)
    pool = candidates({i: (i / 10, 0.3) for i in range(8)}, loads={i: 10 * i for i in range(8)})
    policies = Counter(compose(pool, 3, ACTIVE, 0.2, rng)[1] for _ in range(4000))
    assert policies[BALANCED] / 4000 == pytest.approx(0.2, abs=0.025)
    chosen, policy = compose(pool, 3, ACTIVE, 1.0, rng)
    assert policy == BALANCED and {c.key for c in chosen} == {0, 1, 2}  # the least loaded


def test_comparisons_per_pair_counts_each_comparison_once():
    assert comparisons_per_pair([30, 20, 10]) == 60 / 2 / 3
    assert comparisons_per_pair([7]) == comparisons_per_pair([]) == 0


def test_active_composes_balanced_once_the_criterion_has_its_comparisons_per_pair():
    pool = candidates({i: (i / 10, 0.3) for i in range(8)}, loads={i: 10 * i for i in range(8)})
    rng = random.Random(5)
    before = Counter(compose(pool, 3, ACTIVE, 0.2, rng, ACTIVE_PER_PAIR - 1)[1] for _ in range(50))
    assert before[ACTIVE] > 25
    for _ in range(50):
        chosen, policy = compose(pool, 3, ACTIVE, 0.2, rng, per_pair=ACTIVE_PER_PAIR)
        assert policy == BALANCED and {c.key for c in chosen} == {0, 1, 2}


def test_balanced_is_the_least_loaded_then_least_on_item_whatever_the_estimates():
    pool = [
        Candidate(1, 5, 0, (9.0, 0.01)),
        Candidate(2, 1, 3, (0.0, 1.0)),
        Candidate(3, 1, 0, (0.0, 1.0)),
        Candidate(4, 2, 0, (0.1, 1.0)),
    ]
    chosen, policy = compose(pool, 3, BALANCED, 0.2, random.Random(3))
    assert policy == BALANCED
    assert [c.key for c in chosen] == [3, 2, 4]


def test_active_stops_spending_hits_on_a_clear_winner():
    """Six systems, one that wins every comparison: once it is settled, active HITs show it
    far less than balanced ones would (half the HITs, 3 of 6); the balanced share, choosing
    the least judged systems, takes it nearly always."""
    rng = random.Random(11)
    strength = {0: 10.0, 1: 1.0, 2: 0.9, 3: 0.8, 4: 0.7, 5: 0.6}
    ratings: dict = {}
    shown: Counter = Counter()
    loads: Counter = Counter()
    for hit in range(600):
        pool = [Candidate(s, loads[s], 0, ratings.get(s)) for s in strength]
        chosen, policy = compose(pool, 3, ACTIVE, 0.2, rng)
        scores = [(c.key, strength[c.key] + rng.gauss(0, 0.5)) for c in chosen]
        rate_hit(ratings, scores)
        for c in chosen:
            loads[c.key] += 1
            if hit >= 300:
                shown[policy, c.key] += 1
                shown[policy] += c.key == 0
    active_hits = sum(shown[ACTIVE, s] for s in strength) / 3
    assert shown[ACTIVE, 0] / active_hits < 0.25  # balanced: half the HITs
    assert (shown[ACTIVE, 0] + shown[BALANCED, 0]) / 300 < 0.4
    assert active_hits > 200  # the balanced share is about 20%
