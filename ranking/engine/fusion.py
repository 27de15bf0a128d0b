"""Humans and an automatic judge fused by prediction-powered inference (PPI++).

Angelopoulos, Duchi and Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference": the
judge scores every output of a system, humans judge a sample of them, and the human-scale
mean is the judge's mean over all outputs plus a correction measured on the sample, with a
weight lambda ("power tuning") that minimises the variance. A biased judge cannot bias the
estimate (the correction removes its bias), and with lambda tuned the interval is never
wider than the humans-only one: lambda = 0 is the humans-only mean.

For one system, with Y the human score of each labelled output (the mean of its judgments),
f the judge's score, L the n labelled outputs and A all N outputs (L inside A):

    theta = lambda * mean_A(f) + mean_L(Y - lambda * f)
    Var   = v_y / n - (2 lambda c - lambda^2 v_f) (1/n - 1/N)

where v_y = Var(Y) and c = Cov(Y, f) are estimated on L and v_f = Var(f) on A (ddof 1); at
lambda = 0 it is the humans-only mean and v_y / n.
For one system the variance is minimal at lambda = c / v_f (PPI++'s closed form for the
mean; with the labelled sample inside the N outputs, the factor 1 + n/N of the disjoint form
goes away). The systems share one lambda, the closed form for the vector of their means
that minimises the sum of their variances (PPI++'s trace criterion):

    lambda = sum_s (1/n_s - 1/N_s) c_s / sum_s (1/n_s - 1/N_s) v_f,s

clipped to [0, 1]: a judge's relation to the humans is the judge's, and a per-system lambda
estimated from a few dozen outputs is noisy enough to make the intervals too narrow early in
a campaign (measured on E2E: `benchmarks/simulate_fusion.py`). `pooled=False` tunes one per
system, never wider than humans-only for any system; shared, a system whose outputs the
judge tracks worse than the others' may get an interval slightly wider than its
humans-only one, and a useless judge gets lambda near 0. The clip's top assumes the
judge's scores are on the human scale (as a judge scoring the form's scale is); put a
metric there first, without the human labels (e.g. standardised over all outputs), or the
clip may cut its weight. The interval is theta +- t sqrt(Var), t the Student quantile with
n - 1 degrees of freedom (the CLT's normal quantile once n is large; with ten labelled
outputs the normal one covers too little, for humans-only as well). It is for the system's
mean human score over the population its outputs are drawn from (the items), so no
finite-population correction. The effective number of human judgments is the system's
judgments times v_y / n / Var: how many the humans-only mean would need for this variance.

Human scores are standardised per annotator as the WMT view does (`wmt.z_scores`: an
annotator's mean and standard deviation removed, annotators with one judgment or all scores
equal left out), so that an annotator's habits (harsh, lenient, narrow) do not pass for the
systems' quality, and averaged per output: the unit is a judged output, so repeated
judgments of one output count once. `scale="raw"` keeps the scores as given. The z-scores
of a campaign in progress are not those it will end with (an annotator's mean and spread
move as they judge more), so the estimate aims at a target that moves a little; on E2E's
quality ratings that costs less than the raw scores' skew does (most scores are 100), once
the few typed-in magnitudes far above the slider (111,111) are capped, which the caller
does (they would swing their annotator's every z-score).

The intervals hold for the whole table at once (Bonferroni over the pairs of ranked systems:
each at 1 - 0.05 / P for P pairs), so that two intervals apart, which every reader reads as
an order, are a false claim in at most 5% of campaigns whatever the number of systems (with
95% intervals each, 21 identical systems would show some pair apart in most campaigns).
Rank ranges come from the intervals, claiming no order where they overlap: a system's best
rank is 1 plus the systems whose interval lies wholly above its own, its worst rank N minus
those wholly below; clusters follow from the ranges as for every other view
(`clusters.clusters`). A system without two labelled outputs has no interval: it is left
out (cluster and ranks 0), as the WMT view leaves out systems without z-scores.
"""

from dataclasses import dataclass

import numpy as np

from .clusters import clusters
from .judgments import Judgments
from .wmt import z_scores

LAMBDA_CLIP = (0.0, 1.0)
MIN_LABELLED = 2  # outputs with human scores a system needs for a variance


@dataclass(frozen=True)
class FusedRanking:
    """Per-system results, indexed by system number; NaN (and cluster 0) for a system with
    fewer than MIN_LABELLED labelled outputs."""

    protocol: str
    estimate: np.ndarray  # float64[n]: the fused human-scale mean
    std_error: np.ndarray  # float64[n]
    lower: np.ndarray  # float64[n]: the confidence interval
    upper: np.ndarray  # float64[n]
    humans_only: np.ndarray  # float64[n]: the mean of the labelled outputs' human scores
    humans_only_se: np.ndarray  # float64[n]
    weight: np.ndarray  # float64[n]: lambda
    labelled: np.ndarray  # int64[n]: outputs with a human score
    outputs: np.ndarray  # int64[n]: outputs the judge scored
    judgments: np.ndarray  # int64[n]: human judgments counted
    effective_judgments: np.ndarray  # float64[n]
    rank_lo: np.ndarray  # int64[n]
    rank_hi: np.ndarray  # int64[n]
    cluster: np.ndarray  # int64[n], 1 = best
    order: np.ndarray  # int64[ranked], best first by estimate
    confidence: float


def output_scores(
    judged_output: np.ndarray, annotator: np.ndarray, score: np.ndarray, n_outputs: int, scale: str
) -> tuple[np.ndarray, np.ndarray]:
    """(mean human score per output, NaN where none; judgments counted per output) from one
    row per judgment. `scale`: "z" (per-annotator z-scores, as the WMT view) or "raw"."""
    judged_output = np.asarray(judged_output, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    if scale == "z":
        score = z_scores(Judgments(np.zeros(len(score)), annotator, score))
    elif scale != "raw":
        raise ValueError(f"unknown scale {scale!r}: use 'z' or 'raw'")
    kept = ~np.isnan(score)
    counts = np.bincount(judged_output[kept], minlength=n_outputs)
    sums = np.bincount(judged_output[kept], score[kept], minlength=n_outputs)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan), counts


def ppi_means(
    system: np.ndarray,
    judge: np.ndarray,
    human: np.ndarray,
    n_systems: int,
    clip: tuple[float, float] = LAMBDA_CLIP,
    pooled: bool = True,
) -> dict[str, np.ndarray]:
    """Per system, from one entry per output (its system, the judge's score, the human score
    or NaN): the PPI++ mean and variance, the humans-only ones, lambda and the counts.
    `pooled`: one lambda for all systems (PPI++'s for a vector of means, minimising the
    trace of its covariance), else one per system."""
    system = np.asarray(system, dtype=np.int64)
    f = np.asarray(judge, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    if np.isnan(f).any():
        raise ValueError("the judge must score every output (NaN found)")
    lab = ~np.isnan(y)

    def per_system(values: np.ndarray, where: np.ndarray) -> np.ndarray:
        return np.bincount(system[where], values[where], minlength=n_systems)

    big_n = np.bincount(system, minlength=n_systems).astype(float)
    n = np.bincount(system[lab], minlength=n_systems).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        f_all = per_system(f, np.ones_like(lab)) / big_n
        v_f = per_system((f - f_all[system]) ** 2, np.ones_like(lab)) / (big_n - 1)
        y_bar = per_system(np.where(lab, y, 0.0), lab) / n
        f_lab = per_system(f, lab) / n
        dy = np.where(lab, y - y_bar[system], 0.0)
        df = np.where(lab, f - f_lab[system], 0.0)
        v_y = per_system(dy**2, lab) / (n - 1)
        c = per_system(dy * df, lab) / (n - 1)
        weight = np.clip(np.where(v_f > 0, c / v_f, 0.0), *clip)
        if pooled:  # one lambda minimising the sum of the systems' variances
            gain = np.where(n >= MIN_LABELLED, 1 / n - 1 / big_n, 0.0)
            across = np.nansum(gain * v_f)
            shared = np.nansum(gain * c) / across if across > 0 else 0.0
            weight = np.full(n_systems, np.clip(shared, *clip))
        humans_var = v_y / n
        fused_var = humans_var - (2 * weight * c - weight**2 * v_f) * (1 / n - 1 / big_n)
    estimate = weight * f_all + y_bar - weight * f_lab
    return {
        "estimate": estimate,
        "variance": np.maximum(fused_var, 0.0),
        "humans_only": y_bar,
        "humans_variance": humans_var,
        "weight": weight,
        "labelled": n.astype(np.int64),
        "outputs": big_n.astype(np.int64),
    }


def quantile(labelled: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """The intervals' half-width in standard errors: Student's t with n - 1 degrees of
    freedom for n labelled outputs (NaN below MIN_LABELLED)."""
    from scipy.stats import t as student  # noqa: PLC0415 - scipy loads slowly

    df = np.asarray(labelled, dtype=np.float64) - 1
    return student.ppf(0.5 + confidence / 2, np.where(df >= 1, df, np.nan))


def each_pair(confidence: float, ranked: int) -> float:
    """The confidence of each interval such that no two of `ranked` systems' intervals are
    apart by chance, for the whole table at `confidence` (Bonferroni over the pairs: two
    intervals are apart only where the difference exceeds the half-widths' sum, which is at
    least the difference's own quantile times its standard error)."""
    pairs = max(ranked * (ranked - 1) // 2, 1)
    return 1 - (1 - confidence) / pairs


def interval_ranks(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst rank (1 = top) of each system whose interval is [lower, upper]: it
    is below every system whose interval lies wholly above its own, above every one wholly
    below, and anywhere among those it overlaps."""
    above = lower[None, :] > upper[:, None]  # above[i, j]: j wholly above i
    below = upper[None, :] < lower[:, None]
    n = len(lower)
    return 1 + above.sum(axis=1), n - below.sum(axis=1)


def fused_ranking(
    output_system: np.ndarray,
    judge: np.ndarray,
    judged_output: np.ndarray,
    annotator: np.ndarray,
    score: np.ndarray,
    n_systems: int,
    confidence: float = 0.95,
    scale: str = "z",
    clip: tuple[float, float] = LAMBDA_CLIP,
    pooled: bool = True,
) -> FusedRanking:
    """The fused view: outputs numbered 0..M-1, `output_system[m]` the system of output m and
    `judge[m]` the judge's score of it; one row per human judgment (`judged_output`,
    `annotator`, `score`)."""
    output_system = np.asarray(output_system, dtype=np.int64)
    human, per_output = output_scores(judged_output, annotator, score, len(output_system), scale)
    m = ppi_means(output_system, judge, human, n_systems, clip, pooled)
    judgments = np.bincount(output_system, per_output, minlength=n_systems).astype(np.int64)
    ranked = m["labelled"] >= MIN_LABELLED
    z = quantile(m["labelled"], each_pair(confidence, int(ranked.sum())))
    se = np.where(ranked, np.sqrt(m["variance"]), np.nan)
    estimate = np.where(ranked, m["estimate"], np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(m["variance"] > 0, m["humans_variance"] / m["variance"], 1.0)
    order = np.flatnonzero(ranked)[np.argsort(-estimate[ranked], kind="stable")]
    rank_lo = np.zeros(n_systems, dtype=np.int64)
    rank_hi = np.zeros(n_systems, dtype=np.int64)
    cluster = np.zeros(n_systems, dtype=np.int64)
    if len(order):
        lo, hi = interval_ranks(
            estimate[order] - z[order] * se[order], estimate[order] + z[order] * se[order]
        )
        rank_lo[order], rank_hi[order] = lo, hi
        cluster[order] = clusters(estimate[order], lo, hi)
    return FusedRanking(
        protocol="fused",
        estimate=estimate,
        std_error=se,
        lower=estimate - z * se,
        upper=estimate + z * se,
        humans_only=np.where(ranked, m["humans_only"], np.nan),
        humans_only_se=np.where(ranked, np.sqrt(m["humans_variance"]), np.nan),
        weight=np.where(ranked, m["weight"], np.nan),
        labelled=m["labelled"],
        outputs=m["outputs"],
        judgments=judgments,
        effective_judgments=np.where(ranked, judgments * ratio, np.nan),
        rank_lo=rank_lo,
        rank_hi=rank_hi,
        cluster=cluster,
        order=order,
        confidence=confidence,
    )


def humans_only_ranking(
    output_system: np.ndarray,
    judged_output: np.ndarray,
    annotator: np.ndarray,
    score: np.ndarray,
    n_systems: int,
    confidence: float = 0.95,
    scale: str = "z",
) -> FusedRanking:
    """The same view without a judge (lambda fixed at 0): the baseline the fused view is
    measured against."""
    return fused_ranking(
        output_system,
        np.zeros(len(output_system)),
        judged_output,
        annotator,
        score,
        n_systems,
        confidence,
        scale,
        clip=(0.0, 0.0),
    )
