import pytest

from ranking.metrics import correlate


def test_correlate_agreeing_and_reversed_orders():
    agree = correlate([0.1, 0.2, 0.3, 0.4], [-1.0, 0.0, 0.5, 2.0])
    assert agree.spearman == pytest.approx(1.0) and agree.kendall == pytest.approx(1.0)
    reverse = correlate([0.1, 0.2, 0.3, 0.4], [2.0, 0.5, 0.0, -1.0])
    assert reverse.spearman == pytest.approx(-1.0) and reverse.kendall == pytest.approx(-1.0)
    # Kendall's exact test: 2 of the 4! orders are as extreme.
    assert agree.systems == 4 and agree.kendall_p == pytest.approx(2 / 24)


def test_correlate_counts_ties_as_kendall_tau_b():
    c = correlate([1, 2, 2, 3], [1, 2, 3, 4])
    assert c.kendall == pytest.approx(5 / (6 * 5) ** 0.5)


def test_correlate_needs_three_systems_and_some_variation():
    assert correlate([1, 2], [1, 2]) is None
    constant = correlate([1, 1, 1], [1, 2, 3])
    assert constant.spearman is None and constant.kendall is None


def test_correlate_refuses_unequal_lengths():
    with pytest.raises(ValueError, match="3 metric values for 2 human scores"):
        correlate([1, 2, 3], [1, 2])
