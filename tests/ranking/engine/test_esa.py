"""ESA's error rates and score (ranking/engine/esa.py)."""

import numpy as np
import pytest

from ranking.engine.esa import count_words, error_rates, esa_score


def test_words_are_whitespace_tokens():
    assert count_words("  The Vaults is\tan Italian\n pub. ") == 6
    assert count_words("") == 0


def test_esa_score_is_the_score_as_given():
    assert esa_score(73) == 73.0 and esa_score(0.5) == 0.5


def test_error_rates_per_100_words_by_severity_and_mean_score():
    # System 0: two judgments of 10 and 30 words, 1+2 minor and 0+1 major, scores 80 and 60.
    # System 1: one judgment of 8 words without errors. System 2: nothing judged.
    rates = error_rates(
        system=[0, 1, 0],
        words=[10, 8, 30],
        minor=[1, 0, 2],
        major=[0, 0, 1],
        score=[80.0, 100.0, 60.0],
        n_systems=3,
    )
    assert rates.judgments.tolist() == [2, 1, 0] and rates.words.tolist() == [40, 8, 0]
    assert rates.minor_per_100_words[:2].tolist() == pytest.approx([7.5, 0.0])
    assert rates.major_per_100_words[:2].tolist() == pytest.approx([2.5, 0.0])
    assert rates.errors_per_100_words[:2].tolist() == pytest.approx([10.0, 0.0])
    assert rates.mean_score[:2].tolist() == [70.0, 100.0]
    assert np.isnan(rates.errors_per_100_words[2]) and np.isnan(rates.mean_score[2])


def test_error_rates_refuse_columns_of_different_lengths():
    with pytest.raises(ValueError, match="equal length"):
        error_rates([0, 1], [3], [0, 0], [0, 0], [1.0, 2.0], 2)
