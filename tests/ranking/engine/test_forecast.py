import numpy as np
import pytest

from ranking.engine import Comparisons, bradley_terry_protocol
from ranking.engine.forecast import Z_SEPARATED, forecast, more_hits, stable_since

STRENGTH = np.array([2.0, 0.0, 0.0, -0.3])  # A far ahead; B and C tied; D a little behind


def campaign(hits: int, seed: int) -> Comparisons:
    """HITs showing all four systems; every pair decided by Bradley-Terry on STRENGTH."""
    rng = np.random.default_rng(seed)
    first, second = np.triu_indices(len(STRENGTH), k=1)
    a, b = np.tile(first, hits), np.tile(second, hits)
    a_wins = rng.random(len(a)) < 1 / (1 + np.exp(STRENGTH[b] - STRENGTH[a]))
    return Comparisons(np.where(a_wins, a, b), np.where(a_wins, b, a), np.zeros(len(a), bool))


def forecast_of(hits: int, seed: int = 0):
    ranking = bradley_terry_protocol(campaign(hits, seed), 4, 200, seed=seed)
    order = ranking.order
    names = "ABCD"
    score, spread, rank = ranking.rating[order], ranking.rating_std[order], ranking.rank[order]
    predicted = forecast(score, spread, rank, hits)
    return predicted, [names[i] for i in order]


def test_forecast_on_a_campaign_with_known_structure():
    predicted, order = forecast_of(150)
    assert order[0] == "A" and order[3] == "D"
    by_pair = {frozenset(order[p.upper] + order[p.lower]): p for p in predicted.pairs}
    top = by_pair[frozenset("A" + order[1])]
    assert top.separated and top.more_hits == 0
    tie = by_pair[frozenset("BC")]
    assert not tie.separated and tie.looks_tied
    close = by_pair[frozenset(order[2] + "D")]
    assert not close.separated and close.more_hits > 0
    assert predicted.hits_until_stable == close.more_hits
    assert predicted.tied == 1


def test_forecast_of_more_hits_comes_true_within_a_factor_of_two():
    """C and D (0.3 apart) separate at about the HITs the forecast names, over seeds."""
    ratios = []
    for seed in range(6):
        predicted, order = forecast_of(150, seed)
        close = next(p for p in predicted.pairs if "D" == order[p.lower])
        if close.separated or close.looks_tied:
            continue
        total = 150 + close.more_hits
        later, later_order = forecast_of(2 * total, seed + 100)
        ratios.append(next(p for p in later.pairs if "D" == later_order[p.lower]).separated)
    assert len(ratios) >= 3
    assert np.mean(ratios) >= 0.6


def test_more_hits_grows_as_the_signal_shrinks():
    assert more_hits(Z_SEPARATED, 100) == 1  # there already: the next run
    assert more_hits(Z_SEPARATED / 2, 100) == 300  # a quarter of the z^2: four times the HITs
    assert more_hits(0.5, 100) is None  # more than ten times the HITs: tied at this rate
    assert more_hits(-0.1, 100) is None


def test_forecast_of_a_settled_ranking_needs_no_more_hits():
    predicted = forecast(np.array([3.0, 2.0, 1.0]), np.array([0.1] * 3), np.array([1, 2, 3]), 50)
    assert predicted.hits_until_stable == 0
    assert all(p.separated for p in predicted.pairs)


@pytest.mark.parametrize("spread", [0.0])
def test_forecast_without_spread_treats_the_gap_as_certain(spread):
    predicted = forecast(np.array([1.0, 0.5]), np.array([spread] * 2), np.array([1, 1]), 10)
    assert predicted.pairs[0].more_hits == 1


def test_stable_since_keeps_the_first_ranking_with_todays_clusters():
    assert stable_since(300, False, 200, 100) == 300  # the clusters changed
    assert stable_since(300, True, 200, 100) == 100  # still those of the ranking at 100
    assert stable_since(300, True, 200, 0) == 200  # the first two rankings to agree
    assert stable_since(300, True, 200, 250) == 200  # a record of rankings since taken back
