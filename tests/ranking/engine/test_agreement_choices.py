"""Krippendorff's alpha on choices (ranking/engine/agreement.py, on "choices"): a pair's
unit is (item, the two systems), its value which won; checked against the package on the
same reliability data."""

import krippendorff
import numpy as np
import pytest

from ranking.engine.agreement import Judgments, choice_units, measure_agreement


def pairwise_judgments(rows) -> Judgments:
    """rows: (annotator, item, system_a, system_b, winner) -> two judgments each."""
    hit, annotator, item, system, score = [], [], [], [], []
    for n, (who, what, a, b, winner) in enumerate(rows):
        scores = {"a": (1.0, 0.0), "b": (0.0, 1.0), "tie": (0.5, 0.5)}[winner]
        for s, value in zip((a, b), scores, strict=True):
            hit.append(n)
            annotator.append(who)
            item.append(what)
            system.append(s)
            score.append(value)
    return Judgments(
        np.array(hit),
        np.array(annotator),
        np.array(item),
        np.array(system),
        np.array(score),
        np.ones(len(hit), dtype=bool),
    )


ROWS = [
    # The same pair seen from either side is one unit: 0 beats 1 on item 0 by both.
    (0, 0, 0, 1, "a"),
    (1, 0, 1, 0, "b"),
    (0, 1, 0, 1, "tie"),
    (1, 1, 0, 1, "a"),
    (0, 2, 1, 2, "b"),
    (1, 2, 2, 1, "a"),
    (2, 2, 1, 2, "tie"),
    (0, 3, 0, 2, "a"),
    (1, 3, 0, 2, "b"),
]


def test_a_pair_seen_from_either_side_is_one_unit_valued_by_its_winner():
    unit, value = choice_units(pairwise_judgments(ROWS[:2]))
    assert len(set(unit.tolist())) == 1
    # The lower-numbered system won, twice; each HIT's value counted once.
    assert value[~np.isnan(value)].tolist() == [0.0, 0.0]


def test_nominal_alpha_is_the_packages_on_the_winners():
    result = measure_agreement(pairwise_judgments(ROWS), np.random.default_rng(0), 50, "choices")
    # Reliability data by hand: annotators x units (item 0: 0-1, item 1: 0-1, item 2: 1-2,
    # item 3: 0-2), values 0 lower won, 0.5 tie, 1 higher won.
    nan = np.nan
    data = np.array(
        [
            [0.0, 0.5, 1.0, 0.0],
            [0.0, 0.0, 1.0, 1.0],
            [nan, nan, 0.5, nan],
        ]
    )
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert result.alpha.value == pytest.approx(expected, abs=1e-12)
    assert result.alpha.units == 4


def test_unknown_agreement_value_is_refused():
    with pytest.raises(ValueError, match="agreement on 'ordinal': one of ranks, scores, choices"):
        measure_agreement(pairwise_judgments(ROWS), np.random.default_rng(0), 5, "ordinal")
