"""A judge against the humans: the figures against plain computations with scipy.stats, their
bootstrap intervals (containing the estimate, narrowing with more items, seeded, covering a
known bias), and the cases without an answer."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ranking.engine.judge_agreement import FIGURES, judge_agreement


def reference_z(annotators: list, scores: list) -> list:
    """Each score minus its annotator's mean over their standard deviation (pandas, ddof 1);
    None for annotators with one score or all equal."""
    rows = pd.DataFrame({"annotator": list(annotators), "score": list(scores)}, dtype=float)
    by_annotator = rows.groupby("annotator")["score"]
    z = (rows["score"] - by_annotator.transform("mean")) / by_annotator.transform("std")
    return [None if not np.isfinite(value) else float(value) for value in z]


# Reference computation ------------------------------------------------------------------------


def reference(output_system, judge, judged_output, annotators, scores, hits, n_systems):
    """The point figures by loops over dicts: per-output mean z, the judge standardised over
    all its outputs, scipy's correlations, the human-judged pairs of each HIT."""
    per_output: dict = {}
    for output, z in zip(judged_output, reference_z(annotators, scores), strict=True):
        if z is not None:
            per_output.setdefault(output, []).append(z)
    both = sorted(per_output)
    f = np.array([judge[m] for m in both])
    y = np.array([np.mean(per_output[m]) for m in both])
    fz_all = (np.array(judge) - np.mean(judge)) / np.std(judge)
    fz = np.array([fz_all[m] for m in both])
    system = np.array([output_system[m] for m in both])
    judge_mean = np.array([fz[system == s].mean() for s in range(n_systems)])
    human_mean = np.array([y[system == s].mean() for s in range(n_systems)])
    agreed = []
    by_hit: dict = {}
    for output, score, hit in zip(judged_output, scores, hits, strict=True):
        by_hit.setdefault(hit, []).append((output, score))
    for shown in by_hit.values():
        for i, (a, sa) in enumerate(shown):
            for b, sb in shown[i + 1 :]:
                if sa != sb:
                    human, machine = np.sign(sa - sb), np.sign(judge[a] - judge[b])
                    agreed.append(0.5 if machine == 0 else float(machine == human))
    return {
        "output_pearson": stats.pearsonr(f, y)[0],
        "output_spearman": stats.spearmanr(f, y)[0],
        "within_systems_pearson": stats.pearsonr(fz - judge_mean[system], y - human_mean[system])[
            0
        ],
        "system_spearman": stats.spearmanr(judge_mean, human_mean)[0],
        "system_kendall": stats.kendalltau(judge_mean, human_mean)[0],
        "pairwise_agreement": np.mean(agreed),
        "bias": judge_mean - human_mean,
        "pairs": len(agreed),
    }


# Simulated campaigns ---------------------------------------------------------------------------

QUALITY = np.array([0.5, 0.0, -0.5])
JUDGE_BIAS = np.array([0.0, 0.5, -0.3])


def simulate(rng, items=60, annotators=4, judge_noise=0.5, shown=3):
    """Each item has an output of every system (quality + item effect + noise); the judge
    sees that plus its bias per system; one annotator judges `shown` of an item's outputs in a
    HIT, on their own scale (offset and stretch) with noise. Returns judge_agreement's
    arguments before n_systems."""
    systems = len(QUALITY)
    truth = QUALITY + rng.normal(size=(items, 1)) + rng.normal(size=(items, systems))
    judge = truth + JUDGE_BIAS + rng.normal(scale=judge_noise, size=(items, systems))
    offset, stretch = rng.normal(50, 10, annotators), rng.uniform(5, 15, annotators)
    judged, who, scores, hits = [], [], [], []
    for item in range(items):
        annotator = rng.integers(annotators)
        for s in rng.choice(systems, shown, replace=False):
            judged.append(item * systems + s)
            who.append(annotator)
            noisy = truth[item, s] + rng.normal(scale=0.5)
            scores.append(offset[annotator] + stretch[annotator] * noisy)
            hits.append(item)
    return (
        np.tile(np.arange(systems), items),
        np.repeat(np.arange(items), systems),
        judge.ravel(),
        np.array(judged),
        np.array(who),
        np.array(scores),
        np.array(hits),
    )


def true_bias(judge_noise=0.5):
    """The bias per system in the population: item effect, output noise (variance 1 each)
    and the judge's or the annotators' noise around the systems' qualities."""
    judge_sd = math.sqrt(np.var(QUALITY + JUDGE_BIAS) + 2 + judge_noise**2)
    human_sd = math.sqrt(np.var(QUALITY) + 2 + 0.25)
    judge = QUALITY + JUDGE_BIAS
    return (judge - judge.mean()) / judge_sd - (QUALITY - QUALITY.mean()) / human_sd


def agreement_of(arrays, seed=0, **options):
    return judge_agreement(*arrays, len(QUALITY), np.random.default_rng(seed), **options)


# Tests -------------------------------------------------------------------------------------------


def test_judge_agreement_matches_scipy_on_a_simulated_campaign():
    arrays = simulate(np.random.default_rng(3), items=20)
    found = agreement_of(arrays, resamples=50)
    output_system, _, judge, judged, who, scores, hits = arrays
    expected = reference(output_system, judge, judged, who, scores, hits, len(QUALITY))
    for name in FIGURES:
        assert found.figures[name].value == pytest.approx(expected[name], abs=1e-9), name
    np.testing.assert_allclose(found.bias, expected["bias"], atol=1e-12)
    assert found.pairs == expected["pairs"] == 20 * 3
    assert (found.outputs, found.systems, found.items) == (60, 3, 20)


def test_judge_agreement_matches_scipy_with_ties_and_two_judgments_of_an_output():
    # Four systems on three items; the judge ties some outputs, annotators tie some scores,
    # and outputs 0 and 5 are judged twice.
    output_system = [0, 1, 2, 3] * 3
    items = np.repeat([7, 8, 9], 4)
    judge = [3, 2, 2, 1, 4, 4, 1, 0, 2, 3, 1, 1]
    judged = [0, 1, 2, 3, 0, 1, 4, 5, 6, 7, 5, 6, 8, 9, 10, 11, 8, 11]
    who = [1, 1, 1, 1, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1]
    scores = [80, 60, 60, 10, 5, 3, 90, 90, 40, 20, 7, 2, 6, 6, 1, 2, 50, 30]
    hits = [0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 4, 5, 5]
    found = judge_agreement(
        np.array(output_system), items, np.array(judge, dtype=float), np.array(judged),
        np.array(who), np.array(scores, dtype=float), np.array(hits), 4,
        np.random.default_rng(0), resamples=20,
    )  # fmt: skip
    expected = reference(output_system, judge, judged, who, scores, hits, 4)
    for name in FIGURES:
        assert found.figures[name].value == pytest.approx(expected[name], abs=1e-9), name
    np.testing.assert_allclose(found.bias, expected["bias"], atol=1e-12)
    assert found.pairs == expected["pairs"]


@pytest.mark.parametrize("best_worst", [False, True])
def test_pairwise_agreement_reads_choices_as_the_forms_store_them(best_worst):
    # A pairwise page stores the winner 1, the loser 0 (a tie 0.5 each); a best-worst page
    # of four the best 1, the worst 0 and the two others 0.5, a pair the human never ordered.
    judge = np.array([4.0, 3.0, 2.0, 1.0])
    if best_worst:
        judged, scores, hits = [0, 1, 2, 3], [1.0, 0.5, 0.5, 0.0], [0, 0, 0, 0]
        pairs, agreed = 5, 5.0  # 0 above 1, 2, 3; 1 and 2 above 3
    else:
        judged, scores, hits = (
            [0, 1, 2, 3, 1, 2],
            [0.0, 1.0, 1.0, 0.0, 0.5, 0.5],
            [0, 0, 1, 1, 2, 2],
        )
        pairs, agreed = 2, 1.0  # the judge has 0 above 1 (the human: 1 won), 2 above 3; a tie
    found = judge_agreement(
        np.array([0, 1, 0, 1]), np.zeros(4), judge, np.array(judged), np.zeros(len(judged)),
        np.array(scores), np.array(hits), 2, np.random.default_rng(0), resamples=10,
    )  # fmt: skip
    assert found.pairs == pairs
    assert found.figures["pairwise_agreement"].value == pytest.approx(agreed / pairs)


def test_a_judge_that_is_the_humans_mean_agrees_fully_without_bias():
    output_system, items, _, judged, who, scores, hits = simulate(
        np.random.default_rng(5), items=200
    )
    # One judgment per output and one annotator per HIT: the output's mean z keeps the
    # annotator's order.
    z = np.array(reference_z(list(who), list(scores)), dtype=float)
    judge = np.full(len(output_system), np.nan)
    judge[judged] = z
    scored = ~np.isnan(judge)
    renumber = np.cumsum(scored) - 1
    found = judge_agreement(
        output_system[scored], items[scored], judge[scored], renumber[judged], who, scores,
        hits, 3, np.random.default_rng(0), resamples=200,
    )  # fmt: skip
    for name in ("system_spearman", "system_kendall", "output_pearson", "output_spearman"):
        assert found.figures[name].value == pytest.approx(1.0), name
    assert found.figures["pairwise_agreement"].value == 1.0
    # The judge's standardisation (ddof 0 over every output) against the annotators' (ddof 1
    # each): a bias of a few hundredths at most.
    assert np.abs(found.bias).max() < 0.03
    assert (found.bias_lower < 0.03).all() and (found.bias_upper > -0.03).all()


def test_a_constant_judge_has_no_correlation_and_ties_every_pair():
    arrays = list(simulate(np.random.default_rng(2), items=15))
    arrays[2] = np.full(len(arrays[2]), 0.1)  # a sum of many 0.1 is not exactly 0.1 times n
    found = agreement_of(arrays, resamples=100)
    for name in ("system_spearman", "system_kendall", "output_pearson", "output_spearman"):
        figure = found.figures[name]
        assert (figure.value, figure.lower, figure.upper) == (None, None, None), name
    assert found.figures["pairwise_agreement"].value == 0.5
    # On the z scale the constant judge sits at 0: its bias is minus the humans' means.
    np.testing.assert_allclose(found.judge_mean, 0.0)
    np.testing.assert_allclose(found.bias, -found.human_mean)
    assert np.isfinite(found.bias_lower).all() and np.isfinite(found.bias_upper).all()


def test_judge_agreement_needs_three_outputs_of_two_systems_with_both_scores():
    arrays = simulate(np.random.default_rng(0), items=1, shown=3)
    assert agreement_of(arrays) is not None
    output_system, items, judge, judged, who, scores, hits = simulate(
        np.random.default_rng(0), items=1, shown=2
    )
    assert agreement_of((output_system, items, judge, judged, who, scores, hits)) is None
    # Without human judgments at all
    nothing = np.empty(0)
    arrays = (output_system, items, judge, nothing, nothing, nothing, nothing)
    assert agreement_of(arrays) is None


def test_intervals_contain_the_estimates_and_narrow_with_more_items():
    # Strictly inside (but at 1): an interval stretched to its estimate (_percentiles) would
    # have it at an end. 400 items by 16 annotators is 25 HITs each, where re-estimated z-scores
    # would pull the output-level correlations' resamples below the data's.
    widths = []
    for items, annotators in ((40, 4), (400, 16)):
        arrays = simulate(np.random.default_rng(items), items=items, annotators=annotators)
        found = agreement_of(arrays)
        for name in FIGURES:
            figure = found.figures[name]
            if name.startswith("system_"):  # three systems: rho and tau are often 1
                assert figure.lower <= figure.value <= figure.upper, (items, name)
            else:
                assert figure.lower < figure.value < figure.upper, (items, name)
        assert (found.bias_lower < found.bias).all() and (found.bias < found.bias_upper).all()
        widths.append(
            {name: f.upper - f.lower for name, f in found.figures.items()}
            | {"bias": (found.bias_upper - found.bias_lower).max()}
        )
    few, many = widths
    for name in ("output_pearson", "output_spearman", "pairwise_agreement", "bias"):
        assert many[name] < few[name] / 2, name


def test_output_level_intervals_are_centred_on_the_estimate_with_many_annotators():
    # 10 systems, 600 items, 24 annotators of 25 HITs each, showing 5 outputs: had each
    # resample re-estimated the annotators' z-scores, its correlations would sit about
    # 0.01 below the data's, about half the intervals' width.
    rng = np.random.default_rng(0)
    systems, items, annotators = 10, 600, 24
    truth = rng.normal(size=systems) + rng.normal(size=(items, 1))
    truth = truth + rng.normal(size=(items, systems))
    judge = truth + rng.normal(size=(items, systems))
    shown = np.array([rng.choice(systems, 5, replace=False) for _ in range(items)])
    judged = (np.arange(items)[:, None] * systems + shown).ravel()
    hits = np.repeat(np.arange(items), 5)
    found = judge_agreement(
        np.tile(np.arange(systems), items), np.repeat(np.arange(items), systems),
        judge.ravel(), judged, hits % annotators, 100 + 20 * truth.ravel()[judged], hits,
        systems, np.random.default_rng(0), resamples=300,
    )  # fmt: skip
    for name in ("output_pearson", "output_spearman", "within_systems_pearson"):
        figure = found.figures[name]
        centre, width = (figure.lower + figure.upper) / 2, figure.upper - figure.lower
        assert abs(centre - figure.value) < width / 8, name


def test_judge_agreement_is_determined_by_the_seed():
    arrays = simulate(np.random.default_rng(1), items=30)
    first, again, other = (agreement_of(arrays, seed) for seed in (4, 4, 5))
    assert first.figures == again.figures
    np.testing.assert_array_equal(first.bias_lower, again.bias_lower)
    assert first.figures["output_pearson"].value == other.figures["output_pearson"].value
    assert first.figures["output_pearson"].lower != other.figures["output_pearson"].lower


def test_judge_agreement_chunks_resamples_without_changing_them(monkeypatch):
    arrays = simulate(np.random.default_rng(1), items=30)
    whole = agreement_of(arrays, resamples=100)
    monkeypatch.setattr("ranking.engine.judge_agreement.MAX_CELLS", 7 * len(arrays[3]))
    assert agreement_of(arrays, resamples=100).figures == whole.figures


def test_the_bias_interval_covers_the_true_bias_on_simulated_campaigns():
    truth = true_bias()
    covered = []
    for k in range(200):
        arrays = simulate(np.random.default_rng(k), items=60)
        found = agreement_of(arrays, seed=1000 + k, resamples=500)
        covered.append((found.bias_lower <= truth) & (truth <= found.bias_upper))
    coverage = np.mean(covered)
    assert 0.9 <= coverage <= 0.99, coverage
