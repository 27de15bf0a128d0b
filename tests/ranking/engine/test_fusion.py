"""The fused view (humans and a judge by PPI++): against a plain reference implementation
written here, and its coverage on simulated campaigns whose truth is known."""

import numpy as np
import pytest
from scipy.stats import t as student

from ranking.engine.clusters import clusters
from ranking.engine.fusion import fused_ranking, humans_only_ranking, ppi_means

# Reference implementation ---------------------------------------------------------------------


def reference_z(annotators: list, scores: list) -> list:
    """Each score minus its annotator's mean over their standard deviation (ddof 1); None for
    annotators with one score or all equal."""
    by_annotator: dict = {}
    for a, s in zip(annotators, scores, strict=True):
        by_annotator.setdefault(a, []).append(s)
    out = []
    for a, s in zip(annotators, scores, strict=True):
        mine = by_annotator[a]
        sd = float(np.std(mine, ddof=1)) if len(mine) > 1 else 0.0
        out.append(None if sd == 0 else (s - float(np.mean(mine))) / sd)
    return out


def reference(output_system, judge, judged_output, annotators, scores, n_systems, scale, pooled):
    """Per system: (estimate, standard error, lambda, effective judgments), by loops over a
    dict of outputs, and the rank ranges from intervals that hold for every pair at once at
    95% (Bonferroni: each at 1 - 0.05 / pairs)."""
    values = reference_z(annotators, scores) if scale == "z" else list(scores)
    per_output: dict = {}
    for output, value in zip(judged_output, values, strict=True):
        if value is not None:
            per_output.setdefault(output, []).append(value)
    systems = []
    for s in range(n_systems):
        mine = [m for m in range(len(output_system)) if output_system[m] == s]
        labelled = [m for m in mine if m in per_output]
        y = np.array([np.mean(per_output[m]) for m in labelled])
        f_lab = np.array([judge[m] for m in labelled])
        f_all = np.array([judge[m] for m in mine])
        judgments = sum(len(per_output[m]) for m in labelled)
        systems.append((y, f_lab, f_all, np.cov(y, f_lab)[0, 1], np.var(f_all, ddof=1), judgments))
    if pooled:  # the lambda minimising the sum of the variances below
        gains = [1 / len(y) - 1 / len(f_all) for y, _, f_all, *_ in systems]
        shared = sum(g * c for g, (*_, c, _, _) in zip(gains, systems, strict=True)) / sum(
            g * v for g, (*_, v, _) in zip(gains, systems, strict=True)
        )
    results = []
    for y, f_lab, f_all, cov, var_f, judgments in systems:
        n, big_n = len(y), len(f_all)
        lam = min(max(shared if pooled else cov / var_f, 0.0), 1.0)
        theta = lam * f_all.mean() + (y - lam * f_lab).mean()
        var_h = np.var(y, ddof=1) / n
        var = var_h - (2 * lam * cov - lam**2 * var_f) * (1 / n - 1 / big_n)
        pairs = n_systems * (n_systems - 1) / 2
        half = student.ppf(1 - 0.025 / pairs, n - 1) * np.sqrt(var)
        results.append((theta, np.sqrt(var), lam, judgments * var_h / var, half))
    lo = [t - half for t, *_, half in results]
    hi = [t + half for t, *_, half in results]
    best = [1 + sum(lo[j] > hi[i] for j in range(n_systems)) for i in range(n_systems)]
    worst = [n_systems - sum(hi[j] < lo[i] for j in range(n_systems)) for i in range(n_systems)]
    return [r[:4] for r in results], best, worst


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
def test_fused_ranking_matches_the_reference_implementation(scale, pooled):
    output_system, judge, judged, annotators, scores = small_campaign(1)
    fused = fused_ranking(
        output_system, judge, judged, annotators, scores, 4, scale=scale, pooled=pooled
    )
    expected, best, worst = reference(
        output_system, judge, judged, annotators, scores, 4, scale, pooled
    )
    theta, se, lam, effective = (np.array(column) for column in zip(*expected, strict=True))
    np.testing.assert_allclose(fused.estimate, theta, rtol=1e-9)
    np.testing.assert_allclose(fused.std_error, se, rtol=1e-9)
    np.testing.assert_allclose(fused.weight, lam, rtol=1e-9)
    np.testing.assert_allclose(fused.effective_judgments, effective, rtol=1e-9)
    assert fused.rank_lo.tolist() == best and fused.rank_hi.tolist() == worst
    assert fused.cluster.tolist() == clusters(theta, np.array(best), np.array(worst)).tolist()
    assert fused.judgments.sum() == len(judged)  # every annotator has several varied scores
    assert (fused.weight > 0).all() and (fused.std_error < fused.humans_only_se).all()


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
    output_system, _, judged, annotators, scores = small_campaign(3)
    humans = humans_only_ranking(output_system, judged, annotators, scores, 4)
    np.testing.assert_allclose(humans.estimate, humans.humans_only)
    np.testing.assert_allclose(humans.std_error, humans.humans_only_se)
    np.testing.assert_allclose(humans.effective_judgments, humans.judgments)


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
