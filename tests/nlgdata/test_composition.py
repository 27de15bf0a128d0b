import random
from collections import Counter

import pytest
import trueskill

from nlgdata.composition import (
    ACTIVE,
    BALANCED,
    ONLINE,
    Candidate,
    compose,
    misorder_loss,
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


def test_active_chooses_the_two_closest_uncertain_systems():
    estimates = {
        1: (0.0, 0.1),  # known, far from everyone
        2: (3.0, 0.1),
        3: (1.0, 0.5),  # 3 and 4: close and uncertain
        4: (1.05, 0.5),
        5: (1.02, 0.02),  # as close, but both known precisely: a near-tie known to be one
        6: (1.04, 0.02),
    }
    for seed in range(20):
        chosen, policy = compose(candidates(estimates), 2, ACTIVE, 0.0, random.Random(seed))
        assert policy == ACTIVE
        assert {c.key for c in chosen} == {3, 4}


def test_misorder_loss_falls_with_the_gap_and_with_certainty():
    assert misorder_loss((0, 0.5), (0.1, 0.5)) > misorder_loss((0, 0.5), (2.0, 0.5))
    assert misorder_loss((0, 0.5), (0.1, 0.5)) > misorder_loss((0, 0.05), (0.1, 0.05))
    assert misorder_loss((0, 0), (0, 0)) == 0


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
    """Six systems, one that wins every comparison: once the estimate knows it, active HITs
    leave it out; it is shown in the balanced share (which, choosing the least judged
    systems, takes it nearly always) and hardly anywhere else."""
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
    assert shown[ACTIVE, 0] / active_hits < 0.05  # balanced: half the HITs (3 of 6)
    assert (shown[ACTIVE, 0] + shown[BALANCED, 0]) / 300 < 0.3
    assert active_hits > 200  # the balanced share is about 20%
