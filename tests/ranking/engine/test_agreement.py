import krippendorff
import numpy as np
import pytest

from ranking.engine.agreement import (
    Judgments,
    agreement_with_others,
    alpha_with_interval,
    bootstrap_alphas,
    group_medians,
    hits_done,
    measure_agreement,
    normalised_ranks,
    unit_index,
    value_counts,
)


def test_normalised_ranks_share_tied_ranks_within_each_hit():
    hit = np.array([7, 7, 3, 7, 7, 3, 7, 5, 5, 5, 9])
    score = np.array([100, 50, 2, 100, 100, 1, 10, 7, 7, 7, 42.0])
    ranks = normalised_ranks(hit, score)
    # HIT 7: 10 < 50 < three 100s sharing ranks 2, 3, 4 of 0..4, so 3 / 4 each.
    assert ranks[[6, 1, 0, 3, 4]].tolist() == [0, 0.25, 0.75, 0.75, 0.75]
    assert ranks[[5, 2]].tolist() == [0, 1]  # HIT 3: k = 2
    assert ranks[[7, 8, 9]].tolist() == [0.5, 0.5, 0.5]  # all equal
    assert np.isnan(ranks[10])  # a HIT of one judgment has no order


def test_normalised_ranks_of_nothing():
    assert normalised_ranks(np.zeros(0, int), np.zeros(0)).shape == (0,)


def random_judgments(seed: int, hits: int = 60, k: int = 4, items: int = 12, systems: int = 6):
    """HITs of k systems on random items, each by one of 8 annotators, scores that follow a
    shared system quality plus noise, a few flagged."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=systems)
    rows = []
    for hit in range(hits):
        item, annotator = rng.integers(items), rng.integers(8)
        for system in rng.choice(systems, size=k, replace=False):
            score = round(100 + 30 * (quality[system] + rng.normal()), -1)
            rows.append((hit, annotator, item, system, max(score, 10), hit % 10 != 0))
    columns = [np.array(column) for column in zip(*rows, strict=True)]
    return Judgments(*columns[:5], counted=columns[5].astype(bool))


def dense_alpha(judgments: Judgments, on: str = "ranks") -> float:
    """The package on the annotators x units matrix, built the plain way."""
    ranks = normalised_ranks(judgments.hit, judgments.score) if on == "ranks" else judgments.score
    counted = judgments.counted
    units = sorted(set(zip(judgments.item[counted], judgments.system[counted], strict=True)))
    annotators = sorted(set(judgments.annotator[counted]))
    # An annotator judges a unit at most once here: each gives a column of their own.
    matrix = np.full((len(annotators) * 10, len(units)), np.nan)
    seen: dict[tuple, int] = {}
    for i in np.flatnonzero(counted):
        unit = units.index((judgments.item[i], judgments.system[i]))
        coder = annotators.index(judgments.annotator[i]) * 10
        row = coder + seen.setdefault((coder, unit), 0)
        seen[(coder, unit)] += 1
        matrix[row, unit] = ranks[i]
    return krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_is_the_packages_on_counted_judgments(seed):
    judgments = random_judgments(seed)
    result = measure_agreement(judgments, np.random.default_rng(0), rounds=50).alpha
    assert result.value == pytest.approx(dense_alpha(judgments), abs=1e-12)
    assert result.low < result.value < result.high
    assert result.rounds == 50


@pytest.mark.parametrize("seed", [1, 2])
def test_alpha_on_scores_is_the_packages_on_the_scores_as_given(seed):
    judgments = random_judgments(seed)
    result = measure_agreement(judgments, np.random.default_rng(0), rounds=50, on="scores").alpha
    assert result.value == pytest.approx(dense_alpha(judgments, on="scores"), abs=1e-12)
    assert result.value != pytest.approx(dense_alpha(judgments))
    with pytest.raises(ValueError, match="agreement on 'words'"):
        measure_agreement(judgments, np.random.default_rng(0), on="words")


def test_alpha_interval_is_seeded():
    judgments = random_judgments(4)
    first = measure_agreement(judgments, np.random.default_rng(5), rounds=40).alpha
    again = measure_agreement(judgments, np.random.default_rng(5), rounds=40).alpha
    other = measure_agreement(judgments, np.random.default_rng(6), rounds=40).alpha
    assert (first.low, first.high) == (again.low, again.high)
    assert (first.low, first.high) != (other.low, other.high)


def test_alpha_of_identical_orders_is_one():
    # Two annotators rank the same three systems the same way on each of two items.
    hit = np.repeat([0, 1, 2, 3], 3)
    judgments = Judgments(
        hit=hit,
        annotator=np.repeat([0, 1, 0, 1], 3),
        item=np.repeat([0, 0, 1, 1], 3),
        system=np.tile([0, 1, 2], 4),
        score=np.array([10, 20, 30, 1, 2, 3, 30, 20, 10, 300, 200, 100.0]),
        counted=np.ones(12, bool),
    )
    result = measure_agreement(judgments, np.random.default_rng(0), rounds=20).alpha
    assert (result.value, result.low, result.high) == (1.0, 1.0, 1.0)
    assert (result.units, result.judgments) == (6, 12)


def test_alpha_without_units_judged_twice_is_undefined():
    unit, item = np.array([0, 1, 2]), np.array([0, 0, 1])
    result = alpha_with_interval(unit, item, np.array([0, 0.5, 1]), np.random.default_rng(0), 10)
    assert (result.value, result.low, result.high, result.units, result.rounds) == (
        None,
        None,
        None,
        0,
        0,
    )


@pytest.mark.parametrize("seed", [1, 2])
def test_bootstrap_alphas_are_the_packages_on_the_resampled_units(seed):
    judgments = random_judgments(seed, hits=80)
    value = normalised_ranks(judgments.hit, judgments.score)
    unit = unit_index(judgments.item, judgments.system)
    domain, counts, unit_item = value_counts(unit, judgments.item, value)
    alphas = bootstrap_alphas(counts, unit_item, domain, np.random.default_rng(seed), rounds=8)
    # The same draws, made into resampled units the plain way: every unit of an item drawn
    # twice comes twice.
    items = np.unique(unit_item)
    rng = np.random.default_rng(seed)
    for alpha in alphas:
        drawn = np.bincount(rng.integers(0, len(items), size=len(items)), minlength=len(items))
        rows = np.repeat(np.arange(len(counts)), drawn[np.searchsorted(items, unit_item)])
        expected = krippendorff.alpha(
            value_counts=counts[rows], value_domain=domain, level_of_measurement="interval"
        )
        assert alpha == pytest.approx(expected, abs=1e-12)
    assert len(set(alphas.tolist())) == 8


def test_agreement_with_others_compares_with_the_mean_of_the_others():
    # Annotators 0, 1 and 3 order three systems alike on three items; 2 reverses them.
    # Annotator 4 also reverses them but is not counted, so nobody is compared with them.
    rows = []
    for hit, (annotator, item) in enumerate((a, i) for a in range(5) for i in range(3)):
        scores = [10, 20, 30] if annotator in (0, 1, 3) else [30, 20, 10]
        rows += [(hit, annotator, item, system, scores[system]) for system in range(3)]
    hit, annotator, item, system, score = (np.array(c) for c in zip(*rows, strict=True))
    value = normalised_ranks(hit, score.astype(float))
    counted = annotator != 4
    result = agreement_with_others(annotator, unit_index(item, system), value, counted)
    assert result.annotator.tolist() == [0, 1, 2, 3, 4]
    assert result.correlation.tolist() == pytest.approx([1, 1, -1, 1, -1])
    assert result.shared_units.tolist() == [9] * 5


def test_agreement_with_others_needs_three_shared_units():
    hit = np.array([0, 0, 1, 1])
    annotator = np.array([0, 0, 1, 1])
    value = normalised_ranks(hit, np.array([1, 2, 1, 2.0]))
    unit = np.array([0, 1, 0, 1])
    result = agreement_with_others(annotator, unit, value, np.ones(4, bool))
    assert np.isnan(result.correlation).all()
    assert result.shared_units.tolist() == [2, 2]


def test_group_medians():
    group = np.array([2, 0, 2, 0, 2, 0, 0])
    values = np.array([5, 1.0, 3, 4, 4, 2, 3])
    medians = group_medians(group, values, groups=4)
    assert medians[[0, 2]].tolist() == [2.5, 4]
    assert np.isnan(medians[[1, 3]]).all()


def test_hits_done_counts_flags_and_times_per_annotator():
    done = hits_done(
        annotator=np.array([8, 3, 8, 8, 3]),
        seconds=np.array([30, 50, np.nan, 10, 70.0]),
        flagged=np.array([False, True, False, True, True]),
    )
    assert done.annotator.tolist() == [3, 8]
    assert done.hits.tolist() == [2, 3]
    assert done.flagged.tolist() == [2, 1]
    assert done.median_seconds.tolist() == [60, 20]


def test_measure_agreement_of_nothing_counted():
    judgments = random_judgments(7)
    nothing = Judgments(**{**vars(judgments), "counted": np.zeros(len(judgments.hit), bool)})
    result = measure_agreement(nothing, np.random.default_rng(0), rounds=10)
    assert result.alpha.value is None and result.alpha.units == 0
    assert np.isnan(result.annotators.correlation).all()
    assert (result.annotators.shared_units == 0).all()
