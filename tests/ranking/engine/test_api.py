import numpy as np
import pytest

from ranking.engine import Comparisons, rank_systems


def make_ladder(n_systems: int = 4, per_pair: int = 60) -> Comparisons:
    """Every pair compared per_pair times; the lower index always wins: a clear order."""
    pairs = [(a, b) for a in range(n_systems) for b in range(a + 1, n_systems)] * per_pair
    winner, loser = np.array(pairs).T
    return Comparisons(winner, loser, np.zeros(len(pairs), bool))


@pytest.mark.parametrize("protocol", ["e2e", "bootstrap"])
def test_rank_systems_orders_and_separates_a_clear_ladder(protocol):
    ranking = rank_systems(make_ladder(), 4, protocol, runs=40, seed=0)
    assert ranking.protocol == protocol and ranking.runs == 40 and ranking.seed == 0
    assert ranking.order.tolist() == [0, 1, 2, 3]
    assert ranking.cluster.tolist() == [1, 2, 3, 4]
    assert ranking.rank_lo.tolist() == ranking.rank_hi.tolist() == [1, 2, 3, 4]
    assert ranking.n_comparisons.tolist() == [180, 180, 180, 180]
    assert np.all(np.diff(ranking.mean_mu) < 0)
    assert np.all((ranking.mean_sigma > 0) & (ranking.mean_sigma < 0.5))
    assert np.all(ranking.std_mu >= 0)


def test_rank_systems_reports_progress():
    calls = []
    rank_systems(make_ladder(), 4, runs=10, seed=0, progress=lambda *a: calls.append(a))
    assert calls[-1] == (10, 10)


def test_rank_systems_rejects_unknown_protocol():
    with pytest.raises(
        ValueError,
        match=r"^unknown protocol 'elo': use one of \['bootstrap', 'bt', 'e2e', 'wmt'\]$",
    ):
        rank_systems(make_ladder(), 4, protocol="elo")
