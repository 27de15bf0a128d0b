import choix
import numpy as np
import pytest

from ranking.engine import Comparisons, bradley_terry_protocol, comparisons_from_hits
from ranking.engine.bradley_terry import PairOutcomes, estimate_exists, fit_ratings, win_matrices
from tests.ranking.engine.test_e2e_quality import quality_ratings

# Scores on the rating scale (400 points = odds of 10 to 1) must match the reference to this.
REFERENCE_TOLERANCE = 1e-6


def choix_ratings(comparisons: Comparisons, n_systems: int) -> np.ndarray:
    """The maximum-likelihood Bradley-Terry fit by choix (Maystre and Grossglauser's iterative
    Luce spectral ranking, unregularised), on Arena's scale: 1000 + 400 log10 of the odds.
    A draw is half a win each way: every comparison is given twice, a draw once each way."""
    pairs = []
    for winner, loser, draw in zip(
        comparisons.winner, comparisons.loser, comparisons.draw, strict=True
    ):
        won = (int(winner), int(loser))
        pairs += [won, won[::-1]] if draw else [won, won]
    strength = choix.ilsr_pairwise(n_systems, pairs, alpha=0.0, tol=1e-12, max_iter=10_000)
    return 1000 + 400 / np.log(10) * (strength - strength.mean())


def synthetic(n_systems: int = 8, hits: int = 600, seed: int = 3) -> Comparisons:
    """RankME-like HITs of 4 of the systems: latent strength plus noise, rounded so that
    about a fifth of the pairs draw."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, n_systems)
    systems = np.argsort(rng.random((hits, n_systems)), axis=1)[:, :4]
    scores = np.round(strength[systems] + rng.normal(0, 1.5, systems.shape))
    return comparisons_from_hits(systems, scores)


def fast_ratings(comparisons: Comparisons, n_systems: int) -> np.ndarray:
    outcomes = PairOutcomes.count_of(comparisons, n_systems)
    ratings, augmented = fit_ratings(win_matrices(outcomes, outcomes.count[None], n_systems))
    assert not augmented.any()
    return ratings[0]


def test_fit_equals_choix_on_synthetic_hits():
    comparisons = synthetic()
    assert 0.1 < comparisons.draw.mean() < 0.4
    fast, reference = fast_ratings(comparisons, 8), choix_ratings(comparisons, 8)
    assert np.abs(fast - reference).max() < REFERENCE_TOLERANCE
    assert fast.mean() == pytest.approx(1000.0, abs=1e-9)


def test_fit_equals_choix_on_e2e_quality():
    names, comparisons = quality_ratings()  # skips, saying why, where the file is absent
    fast = fast_ratings(comparisons, len(names))
    reference = choix_ratings(comparisons, len(names))
    assert np.abs(fast - reference).max() < REFERENCE_TOLERANCE


def test_a_resample_is_the_reference_fit_of_the_comparisons_it_draws():
    """A multinomial draw over pair outcomes stands for comparisons drawn with replacement:
    its matrix, fitted, equals choix's fit of those comparisons written out."""
    comparisons = synthetic(hits=300)
    outcomes = PairOutcomes.count_of(comparisons, 8)
    counts = np.random.default_rng(5).multinomial(
        len(comparisons), outcomes.count / len(comparisons)
    )
    drawn = Comparisons(
        np.repeat(outcomes.winner, counts),
        np.repeat(outcomes.loser, counts),
        np.repeat(outcomes.draw, counts),
    )
    ratings, _ = fit_ratings(win_matrices(outcomes, counts[None], 8))
    assert np.abs(ratings[0] - choix_ratings(drawn, 8)).max() < REFERENCE_TOLERANCE


def test_ratings_are_on_arenas_scale():
    # 10 wins to 1: odds of 10 to 1 are 400 points, around a mean of 1000.
    comparisons = Comparisons([0] * 10 + [1], [1] * 10 + [0], [False] * 11)
    ranking = bradley_terry_protocol(comparisons, 2, rounds=20, seed=0)
    assert ranking.rating == pytest.approx([1200.0, 800.0], abs=1e-9)


def test_draws_count_half_a_win_each_way():
    # 3 wins and 1 loss, and 2 draws: 4 to 2 in wins, odds of 2 to 1.
    comparisons = Comparisons([0, 0, 0, 1, 0, 1], [1, 1, 1, 0, 1, 0], [False] * 4 + [True] * 2)
    rating = bradley_terry_protocol(comparisons, 2, rounds=20, seed=0).rating
    assert rating[0] - rating[1] == pytest.approx(400 * np.log10(2.0), abs=1e-9)


def ladder_with_upsets() -> Comparisons:
    """Four systems, A clearly first, B and C alike (B slightly ahead), D clearly last;
    each has lost at least once, so the estimate exists."""
    hits = [[300, 120, 80, 10]] * 11 + [[300, 80, 120, 10]] * 9
    hits += [[90, 100, 80, 10], [90, 80, 100, 10], [300, 5, 100, 10], [300, 100, 5, 10]]
    return comparisons_from_hits(np.tile(np.arange(4), (len(hits), 1)), np.array(hits))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_known_order_gives_arena_ranks(seed):
    ranking = bradley_terry_protocol(ladder_with_upsets(), 4, rounds=200, seed=seed)
    assert ranking.rank.tolist() == [1, 2, 2, 4]  # B and C: neither significantly better
    assert ranking.order.tolist() == [0, 1, 2, 3]
    assert np.all(ranking.ci_lo < ranking.rating) and np.all(ranking.rating < ranking.ci_hi)
    assert (ranking.rank_lo.tolist(), ranking.rank_hi.tolist()) == ([1, 2, 2, 4], [1, 3, 3, 4])
    assert ranking.n_comparisons.tolist() == [72, 72, 72, 72]
    assert not ranking.augmented_full_fit


def test_weighing_reweighs_the_full_fit_and_every_resample():
    """A weighing that hands every win to the loser reverses the order, in the rating and in
    the resamples' ranks; none keeps the counts as they are."""
    as_counted = bradley_terry_protocol(ladder_with_upsets(), 4, rounds=50, seed=0)
    assert (
        as_counted.rating.tolist()
        == bradley_terry_protocol(
            ladder_with_upsets(), 4, rounds=50, seed=0, weigh=None
        ).rating.tolist()
    )
    reversed_ = bradley_terry_protocol(
        ladder_with_upsets(), 4, rounds=50, seed=0, weigh=lambda w: w.transpose(0, 2, 1)
    )
    assert np.argsort(-reversed_.rating).tolist() == [3, 2, 1, 0]
    assert reversed_.rank_lo.tolist() == as_counted.rank_lo[::-1].tolist()


def test_order_is_by_arena_rank_then_rating():
    # C's wide interval keeps anyone from being significantly better than it, so it shares
    # rank 1 with A although its rating is below B's, which A outranks.
    many = [(0, 1)] * 300 + [(1, 0)] * 100 + [(0, 2)] * 4 + [(2, 0)] * 1 + [(1, 2)] * 2
    many += [(2, 1)] * 2
    winner, loser = np.array(many).T
    ranking = bradley_terry_protocol(Comparisons(winner, loser, [False] * len(many)), 3, 200, 0)
    assert ranking.rating[1] > ranking.rating[2]
    assert ranking.rank.tolist() == [1, 2, 1]
    assert ranking.order.tolist() == [0, 2, 1]


def test_infinite_estimates_get_virtual_draws_and_stay_finite():
    # A beat B and C every time, B beat C every time: no finite maximum.
    winner, loser = np.array([(0, 1), (0, 2), (1, 2)] * 6).T
    ranking = bradley_terry_protocol(Comparisons(winner, loser, [False] * 18), 3, 50, seed=0)
    assert ranking.augmented_full_fit and ranking.augmented_rounds == 50
    assert np.all(np.isfinite(ranking.rating)) and np.all(np.diff(ranking.rating) < 0)
    assert ranking.order.tolist() == [0, 1, 2]


def test_a_system_never_compared_sits_at_the_mean():
    winner, loser = np.array([(0, 1), (1, 2), (2, 0)] * 5).T
    ranking = bradley_terry_protocol(Comparisons(winner, loser, [False] * 15), 4, 20, seed=0)
    assert ranking.rating == pytest.approx([1000.0] * 4)
    assert ranking.n_comparisons.tolist() == [10, 10, 10, 0]


def test_estimate_exists_when_every_system_reaches_every_other():
    cycle = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], float)
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], float)
    assert estimate_exists(np.stack([cycle, chain])).tolist() == [True, False]


def test_same_seed_same_intervals_and_progress_per_chunk():
    comparisons, calls = synthetic(), []
    first = bradley_terry_protocol(comparisons, 8, 600, seed=4, progress=lambda *a: calls.append(a))
    second = bradley_terry_protocol(comparisons, 8, 600, seed=4)
    assert np.array_equal(first.ci_lo, second.ci_lo) and np.array_equal(first.ci_hi, second.ci_hi)
    assert calls == [(250, 600), (500, 600), (600, 600)]
    assert first.rounds == 600 and first.seed == 4


def test_rounds_must_be_positive():
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        bradley_terry_protocol(synthetic(), 8, 0, seed=0)
