import numpy as np
import pytest

from ranking.engine.comparisons import Comparisons, comparisons_from_hits


def test_comparisons_from_hits_higher_score_wins():
    c = comparisons_from_hits(np.array([[3, 7]]), np.array([[50.0, 80.0]]))
    assert c.winner.tolist() == [7]
    assert c.loser.tolist() == [3]
    assert c.draw.tolist() == [False]


def test_comparisons_from_hits_equal_scores_draw():
    c = comparisons_from_hits(np.array([[3, 7]]), np.array([[100.0, 100.0]]))
    assert c.draw.tolist() == [True]
    assert sorted([c.winner[0], c.loser[0]]) == [3, 7]


def test_comparisons_from_hits_yields_all_pairs_in_order():
    systems = np.array([[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]])
    scores = np.array([[5.0, 4, 3, 2, 1], [1.0, 1, 1, 1, 1]])
    c = comparisons_from_hits(systems, scores)
    assert len(c) == 2 * 10
    # First HIT: position order is score order, so the earlier position always wins.
    first = list(zip(c.winner[:10].tolist(), c.loser[:10].tolist(), strict=True))
    assert first == [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
    assert not c.draw[:10].any() and c.draw[10:].all()


def test_comparisons_from_hits_uses_only_order_of_scores():
    systems = np.array([[0, 1, 2]])
    a = comparisons_from_hits(systems, np.array([[100.0, 1.0, 50.0]]))
    b = comparisons_from_hits(systems, np.array([[3.0, 1.0, 2.0]]))
    assert a.winner.tolist() == b.winner.tolist() and a.loser.tolist() == b.loser.tolist()


def test_comparisons_from_hits_skips_nan_scores():
    c = comparisons_from_hits(np.array([[0, 1, 2]]), np.array([[1.0, np.nan, 3.0]]))
    assert len(c) == 1
    assert (c.winner[0], c.loser[0]) == (2, 0)


def test_comparisons_from_hits_skips_masked_scores():
    mask = np.array([[True, False, True]])
    c = comparisons_from_hits(np.array([[0, 1, 2]]), np.array([[1.0, 9.0, 3.0]]), mask)
    assert len(c) == 1


def test_comparisons_from_hits_skips_same_system_pairs():
    c = comparisons_from_hits(np.array([[0, 0, 1]]), np.array([[1.0, 2.0, 3.0]]))
    assert len(c) == 2
    assert set(c.winner.tolist()) == {1}


def test_comparisons_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="must be 1-d arrays of equal length"):
        Comparisons(np.array([0, 1]), np.array([1]), np.array([False, False]))


def test_comparisons_per_system_counts_both_sides():
    c = Comparisons(np.array([0, 0, 2]), np.array([1, 2, 1]), np.array([False, True, False]))
    assert c.per_system(4).tolist() == [2, 2, 2, 0]
