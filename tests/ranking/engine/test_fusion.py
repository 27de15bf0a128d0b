"""The fused view (humans and a judge by PPI++): against ppi_py (the PPI++ authors' package)
and statsmodels, and its coverage on simulated campaigns whose truth is known."""

import numpy as np
import pandas as pd
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy.optimize import minimize_scalar
from scipy.stats import norm
from scipy.stats import t as student
from statsmodels.stats.weightstats import DescrStatsW

from ranking.engine.clusters import clusters
from ranking.engine.fusion import fused_ranking, humans_only_ranking, ppi_means

# The oracles -------------------------------------------------------------------------------


def human_scores(judged, annotators, scores, scale: str) -> pd.Series:
    """Judged output -> the mean of its human scores, raw or standardised per annotator (by
    pandas: minus the annotator's mean, over their sample standard deviation)."""
    rows = pd.DataFrame({"output": judged, "annotator": annotators, "score": scores})
    if scale == "z":
        by_annotator = rows.groupby("annotator")["score"]
        mean, sd = by_annotator.transform("mean"), by_annotator.transform("std")
        rows["score"] = (rows["score"] - mean) / sd
    return rows.groupby("output")["score"].mean()


def split(output_system, judge, human: pd.Series, system: int):
    """One system's human scores Y, the judge's scores of those outputs, and of the others."""
    mine = np.flatnonzero(output_system == system)
    labelled = np.isin(mine, human.index)
    return human[mine[labelled]].to_numpy(), judge[mine[labelled]], judge[mine[~labelled]]


def ppi_py_standard_error(y, f_labelled, f_unlabelled, weight: float) -> float:
    """ppi_py's standard error of the PPI++ mean at `weight`, from its 95% interval."""
    lower, upper = ppi_mean_ci(y, f_labelled, f_unlabelled, alpha=0.05, lam=weight)
    return float((upper - lower)[0] / 2 / norm.ppf(0.975))


def ppi_py_tuned_weight(y, f_labelled, f_unlabelled) -> float:
    """The lambda ppi_py tunes (its estimate is linear in lambda: mean(Y) at 0)."""
    tuned = float(ppi_mean_pointestimate(y, f_labelled, f_unlabelled)[0])
    return (tuned - y.mean()) / (f_unlabelled.mean() - f_labelled.mean())


def small_campaign(seed: int):
    """4 systems of 60 outputs, about half judged, some twice, by 6 annotators with their
    own offsets; a judge that tracks quality with system-dependent bias."""
    rng = np.random.default_rng(seed)
    output_system = np.repeat(np.arange(4), 60)
    quality = output_system * 0.4 + rng.normal(size=240)
    judge = 0.6 * quality + rng.normal(scale=0.7, size=240) + 0.3 * (output_system == 2)
    judged = rng.choice(240, size=150, replace=False)
    judged = np.concatenate([judged, judged[:40]])
    annotators = rng.integers(0, 6, size=len(judged))
    scores = 50 + 10 * quality[judged] + 5 * annotators + rng.normal(scale=4, size=len(judged))
    return output_system, judge, judged, annotators, scores


@pytest.mark.parametrize("scale", ["z", "raw"])
@pytest.mark.parametrize("pooled", [True, False])
def test_fused_ranking_is_ppi_py_s_estimator(scale, pooled):
    """ppi_py takes the judge's scores of the unlabelled outputs apart from the labelled
    ones; the engine weighs the judge's mean over all N outputs, the n labelled among them.
    The same estimator: ppi_py's lambda is the engine's times (N - n) / N. Its standard
    error differs by what each assumes (ppi_py: an unlabelled sample drawn apart, variances
    with ddof 0), a few per cent at n of 35 to 42; humans-only, only by ddof."""
    output_system, judge, judged, annotators, scores = small_campaign(1)
    fused = fused_ranking(
        output_system, judge, judged, annotators, scores, 4, scale=scale, pooled=pooled
    )
    human = human_scores(judged, annotators, scores, scale)
    weights_compared = 0
    for system in range(4):
        y, f_labelled, f_unlabelled = split(output_system, judge, human, system)
        n, big_n = len(y), len(y) + len(f_unlabelled)
        weight = fused.weight[system] * (big_n - n) / big_n
        at_weight = ppi_mean_pointestimate(y, f_labelled, f_unlabelled, lam=weight)
        assert fused.estimate[system] == pytest.approx(float(at_weight[0]), rel=1e-9)
        assert fused.humans_only[system] == pytest.approx(y.mean(), rel=1e-9)
        classical = ppi_py_standard_error(y, f_labelled, f_unlabelled, 0.0)
        assert fused.humans_only_se[system] == pytest.approx(classical * np.sqrt(n / (n - 1)))
        ppi_se = ppi_py_standard_error(y, f_labelled, f_unlabelled, weight)
        assert fused.std_error[system] == pytest.approx(ppi_se, rel=0.04)
        if not pooled and 0 < fused.weight[system] < 1:  # tuned per system, not clipped
            tuned = ppi_py_tuned_weight(y, f_labelled, f_unlabelled)
            assert tuned * n / (n - 1) == pytest.approx(weight, rel=1e-9)  # Cov over n there
            weights_compared += 1
    assert weights_compared == (4 if (scale, pooled) == ("z", False) else 0)
    assert fused.judgments.sum() == len(judged)  # every annotator has several varied scores
    assert (fused.weight > 0).all() and (fused.std_error < fused.humans_only_se).all()
    ratio = fused.humans_only_se**2 / fused.std_error**2
    np.testing.assert_allclose(fused.effective_judgments, fused.judgments * ratio, rtol=1e-12)


@pytest.mark.parametrize("scale", ["z", "raw"])
def test_the_shared_weight_minimises_the_systems_summed_variance(scale):
    """PPI++'s trace criterion: the pooled lambda is where the sum of the systems' variances
    is least, found here numerically over the per-system variances at a fixed lambda."""
    output_system, judge, judged, annotators, scores = small_campaign(1)
    human = human_scores(judged, annotators, scores, scale)
    per_output = human.reindex(range(len(output_system))).to_numpy()
    shared = ppi_means(output_system, judge, per_output, 4)["weight"]

    def summed_variance(weight: float) -> float:
        fixed = ppi_means(output_system, judge, per_output, 4, clip=(weight, weight), pooled=False)
        return float(fixed["variance"].sum())

    best = minimize_scalar(summed_variance, bounds=(0.0, 1.0), method="bounded")
    assert shared == pytest.approx(np.full(4, best.x), abs=1e-4)


def test_rank_ranges_and_clusters_follow_from_the_intervals():
    """A system's best rank is 1 plus the systems whose interval (Student's t, n - 1 degrees
    of freedom, each at 1 - 0.05 / 6 so that the 6 pairs of 4 systems hold together at 95%:
    Bonferroni) lies wholly above its own; its worst, 4 minus those wholly below."""
    output_system, judge, judged, annotators, scores = small_campaign(1)
    fused = fused_ranking(output_system, judge, judged, annotators, scores, 4)
    half = student.ppf(1 - 0.025 / 6, fused.labelled - 1) * fused.std_error
    lower, upper = fused.estimate - half, fused.estimate + half
    np.testing.assert_allclose(fused.lower, lower, rtol=1e-12)
    np.testing.assert_allclose(fused.upper, upper, rtol=1e-12)
    best = [1 + sum(lower[j] > upper[i] for j in range(4)) for i in range(4)]
    worst = [4 - sum(upper[j] < lower[i] for j in range(4)) for i in range(4)]
    assert fused.rank_lo.tolist() == best and fused.rank_hi.tolist() == worst
    expected = clusters(fused.estimate, np.array(best), np.array(worst))
    assert fused.cluster.tolist() == expected.tolist()


def test_a_judge_equal_to_the_humans_is_worth_every_output_labelled():
    rng = np.random.default_rng(2)
    output_system = np.repeat(np.arange(4), 400)
    quality = rng.normal(size=1600)
    human = np.where(rng.random(1600) < 0.25, quality, np.nan)
    m = ppi_means(output_system, quality, human, 4)
    np.testing.assert_allclose(m["weight"], 1.0, atol=0.15)
    # about Var(Y) / N, as if all 400 outputs of each system had been judged (the sample
    # variances of the 100 or so labelled ones make it noisy)
    np.testing.assert_allclose(m["variance"], 1 / 400, rtol=0.5)
    assert (m["variance"] < m["humans_variance"] / 2).all()


def test_without_a_judge_the_view_is_the_humans_only_mean():
    """And its intervals are the t intervals of statsmodels over the judged outputs, each at
    1 - 0.05 / 6 so that the 6 pairs of the 4 systems hold together at 95% (Bonferroni)."""
    output_system, _, judged, annotators, scores = small_campaign(3)
    humans = humans_only_ranking(output_system, judged, annotators, scores, 4)
    np.testing.assert_allclose(humans.estimate, humans.humans_only)
    np.testing.assert_allclose(humans.std_error, humans.humans_only_se)
    np.testing.assert_allclose(humans.effective_judgments, humans.judgments)
    human = human_scores(judged, annotators, scores, "z")
    for system in range(4):
        y, _, _ = split(output_system, np.zeros(len(output_system)), human, system)
        lower, upper = DescrStatsW(y).tconfint_mean(alpha=0.05 / 6)
        assert (humans.lower[system], humans.upper[system]) == pytest.approx((lower, upper))


def test_a_system_with_one_labelled_output_is_left_out():
    output_system = np.repeat([0, 1, 2], 5)
    judge = np.arange(15.0)
    fused = fused_ranking(
        output_system,
        judge,
        np.array([0, 1, 2, 5, 6, 10]),
        np.zeros(6),
        np.arange(6.0),
        3,
        scale="raw",
    )
    assert fused.order.tolist() == [0, 1] or fused.order.tolist() == [1, 0]
    assert fused.cluster[2] == 0 and np.isnan(fused.estimate[2])


def test_all_tied_human_scores_make_one_cluster_spanning_every_rank():
    output_system = np.repeat(np.arange(5), 20)
    judge = np.random.default_rng(0).normal(size=100)
    judged = np.arange(0, 100, 2)
    fused = fused_ranking(
        output_system, judge, judged, np.zeros(50), np.full(50, 70.0), 5, scale="raw"
    )
    assert fused.cluster.tolist() == [1] * 5
    assert (fused.rank_lo.tolist(), fused.rank_hi.tolist()) == ([1] * 5, [5] * 5)


def test_intervals_apart_order_the_systems_and_overlapping_ones_do_not():
    output_system = np.repeat(np.arange(3), 200)
    rng = np.random.default_rng(0)
    means = np.array([10.0, 0.0, 0.02])[output_system]
    scores = means + rng.normal(size=600)
    judge = scores + rng.normal(size=600)
    fused = fused_ranking(
        output_system, judge, np.arange(600), np.zeros(600), scores, 3, scale="raw"
    )
    assert fused.cluster.tolist() == [1, 2, 2]
    assert (fused.rank_lo.tolist(), fused.rank_hi.tolist()) == ([1, 2, 2], [1, 3, 3])


# Coverage on simulated campaigns ----------------------------------------------------------------

CAMPAIGNS, SYSTEMS, OUTPUTS, LABELLED = 1000, 4, 500, 100
TRUE_MEANS = np.array([0.0, 0.3, 0.5, 1.0])


def simulated(judge_kind: str, seed: int):
    """CAMPAIGNS x SYSTEMS systems, each with OUTPUTS outputs of quality ~ N(mean, 1); humans
    score LABELLED of them (quality + N(0, 0.7)), the judge all. As one flat array of
    outputs, system c * SYSTEMS + s for campaign c: `ppi_means` works per system."""
    rng = np.random.default_rng(seed)
    shape = (CAMPAIGNS, SYSTEMS, OUTPUTS)
    quality = TRUE_MEANS[None, :, None] + rng.normal(size=shape)
    human = quality + rng.normal(scale=0.7, size=shape)
    if judge_kind == "unbiased":
        judge = quality + rng.normal(scale=0.5, size=shape)
    elif judge_kind == "biased":  # compressed, shifted, and kinder to some systems
        judge = 0.5 * quality + 2.0 + np.array([0.8, 0.0, -0.5, 0.3])[None, :, None]
        judge = judge + rng.normal(scale=0.5, size=shape)
    else:  # useless: noise
        judge = rng.normal(size=shape)
    labelled = rng.permuted(
        np.arange(OUTPUTS)[None, None, :].repeat(CAMPAIGNS, 0).repeat(SYSTEMS, 1), axis=2
    )
    human = np.where(labelled < LABELLED, human, np.nan)
    system = np.broadcast_to(np.arange(CAMPAIGNS * SYSTEMS).reshape(CAMPAIGNS, SYSTEMS, 1), shape)
    return system.ravel(), judge.ravel(), human.ravel()


def campaign_means(system, judge, human, pooled: bool) -> dict:
    """ppi_means per simulated campaign: per system, all campaigns in one call; pooled, one
    call per campaign (its systems share lambda)."""
    if not pooled:
        return ppi_means(system, judge, human, CAMPAIGNS * SYSTEMS, pooled=False)
    size = SYSTEMS * OUTPUTS
    parts = [
        ppi_means(
            system[c * size : (c + 1) * size] - c * SYSTEMS,
            judge[c * size : (c + 1) * size],
            human[c * size : (c + 1) * size],
            SYSTEMS,
        )
        for c in range(CAMPAIGNS)
    ]
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


@pytest.mark.parametrize("pooled", [True, False])
@pytest.mark.parametrize("judge_kind", ["unbiased", "biased", "useless"])
def test_nominal_95_percent_intervals_cover_the_truth_in_93_to_97_percent(judge_kind, pooled):
    seed = {"unbiased": 1, "biased": 2, "useless": 3}[judge_kind]
    m = campaign_means(*simulated(judge_kind, seed), pooled)
    t = student.ppf(0.975, LABELLED - 1)
    truth = np.tile(TRUE_MEANS, CAMPAIGNS)
    fused_se, humans_se = np.sqrt(m["variance"]), np.sqrt(m["humans_variance"])
    covered = np.abs(m["estimate"] - truth) <= t * fused_se
    assert 0.93 <= covered.mean() <= 0.97
    # Per system (1,000 campaigns each) as well: no system pays for another's coverage.
    assert (covered.reshape(CAMPAIGNS, SYSTEMS).mean(axis=0) >= 0.93).all()
    humans_covered = np.abs(m["humans_only"] - truth) <= t * humans_se
    assert 0.93 <= humans_covered.mean() <= 0.97
    width = (fused_se / humans_se).mean()
    if not pooled:
        assert (fused_se <= humans_se + 1e-12).all()  # never wider than humans-only
    if judge_kind == "useless":
        # no wider than humans-only beyond noise, and no narrower
        assert 0.98 < width < 1.005
        assert (fused_se / humans_se).max() < 1.02
    elif judge_kind == "unbiased":
        # corr(Y, f) = 1 / sqrt(1.49 * 1.25) = 0.73: Var(fused) / Var(humans) is about
        # 1 - 0.73^2 (1 - 100/500) = 0.57, an interval about 0.76 as wide
        assert 0.72 < width < 0.80
    else:  # corr 0.58: 1 - 0.58^2 * 0.8 = 0.73, an interval about 0.85 as wide
        assert 0.80 < width < 0.90


# The evidence rules (tests/ranking/engine/test_evidence.py) on the fused view -------------


def test_a_system_scored_above_every_other_output_stands_alone_at_the_top():
    rng = np.random.default_rng(4)
    output_system = np.repeat(np.arange(4), 40)
    scores = np.where(output_system == 0, 100.0, rng.integers(1, 90, size=160).astype(float))
    judge = rng.normal(size=160)
    fused = fused_ranking(
        output_system, judge, np.arange(160), rng.integers(0, 5, size=160), scores, 4
    )
    assert (fused.rank_lo[0], fused.rank_hi[0]) == (1, 1)
    assert fused.cluster[0] == 1 and (fused.cluster[1:] > 1).all()


def test_systems_with_identical_outputs_and_scores_share_a_cluster():
    rng = np.random.default_rng(5)
    twin = rng.normal(size=30)
    judge = np.concatenate([twin, twin, rng.normal(size=60)])
    output_system = np.repeat(np.arange(4), 30)
    scores = rng.integers(1, 100, size=120).astype(float)
    scores[30:60] = scores[:30]
    fused = fused_ranking(output_system, judge, np.arange(120), np.zeros(120), scores, 4)
    assert fused.estimate[0] == pytest.approx(fused.estimate[1])
    assert fused.cluster[0] == fused.cluster[1]


def test_systems_with_the_same_judgments_up_to_names_share_one_cluster():
    rng = np.random.default_rng(6)
    base_scores, base_judge = rng.integers(1, 100, size=25).astype(float), rng.normal(size=25)
    output_system = np.repeat(np.arange(3), 25)
    fused = fused_ranking(
        output_system,
        np.tile(base_judge, 3),
        np.arange(75),
        np.tile(np.arange(25) % 4, 3),
        np.tile(base_scores, 3),
        3,
    )
    assert fused.cluster.tolist() == [1, 1, 1]
    assert (fused.rank_lo.tolist(), fused.rank_hi.tolist()) == ([1, 1, 1], [3, 3, 3])
