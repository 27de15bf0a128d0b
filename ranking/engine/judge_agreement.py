"""An automatic judge against the humans (issue 29), each figure with a bootstrap interval.
numpy and scipy.sparse; no Django.

From the judge's score of each output and the crowd's judgments of them:

- System level: Spearman's rho and Kendall's tau-b (scipy's default: ties in either order
  shrink the denominator) between the judge's system means and the humans'.
- Output level: Pearson's r and Spearman's rho between the judge's score and the output's
  mean human z-score, over the outputs both scored; and Pearson's r within systems (both
  centred per system: what a fused ranking gains from).
- Pairwise agreement: over the human-judged pairs (two outputs judged by one annotator in one
  HIT, that is one assignment), the share the judge orders as the human did. A pair the
  human tied says nothing of an order and is left out; a pair the judge ties counts half.
  Choosing forms store the choice as the score (annotation/judging/pairwise.py: the winner
  1, the loser 0, a tie 0.5 each; best-worst: the best 1, the worst 0, the others 0.5), so
  the scores give the human's order exactly: a pairwise page is one pair, a best-worst page
  orders the best above every other output and the worst below, and the pairs of two
  "others" are ties the human never judged, left out as ties.
- Bias per system: the judge's mean minus the humans' mean, over the system's outputs both
  scored, with the judge put on the z scale first: standardised over all its outputs
  (population standard deviation, as judges.service.fused_rows does; no human score used).

Human scores are per-annotator z-scores (the WMT view's rule, `wmt.z_scores`: ddof 1,
annotators with one judgment or all scores equal left out), averaged per output: the unit
is a judged output, as in the fused view.

Intervals: a percentile bootstrap over items. An item's outputs go into a resample together
with their judgments (a HIT shows outputs of one item, so its judgments depend on each
other), and each resample recomputes every step on what it drew: the annotators' z-scores,
the judge's standardisation, the means, the ranks. A resample that draws an item twice counts
its outputs and judgments twice (weights). One exception: the output-level correlations
keep each output's human z-score as the data gave it. Re-estimating an annotator's mean and
spread in a resample adds noise to every output's z-score, which pulls the resamples'
correlations below the data's (by about 0.01 with 25 HITs per annotator, measured), so
their percentiles would miss the figure. The bias and the system-level figures compare
means, and there the re-estimated annotator means move with the items drawn, as they do in
the data; held fixed instead, the bias intervals come out twice as wide (and cover the
true bias every time in tests/ranking/engine/test_judge_agreement.py's simulation).

A figure undefined in a resample (a constant judge, one system drawn) is left out of its
percentiles; a figure undefined on the data (None) has no interval. A percentile interval
that still misses its estimate (rank correlations on few items, see `_percentiles`) is
stretched to it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

RESAMPLES = 1000
CONFIDENCE = 0.95
MIN_OUTPUTS = 3  # outputs both scored, below which nothing is reported
# Entries of one (resamples x judgments) array: resamples are computed in chunks this big
# (21 systems by 5,000 items: 266 MB at most).
MAX_CELLS = 500_000
CORRELATIONS = (
    "system_spearman",
    "system_kendall",
    "output_pearson",
    "output_spearman",
    "within_systems_pearson",
)
FIGURES = (*CORRELATIONS, "pairwise_agreement")


@dataclass(frozen=True)
class Figure:
    value: float | None  # None where undefined (a constant judge, one system)
    lower: float | None  # the bootstrap interval
    upper: float | None


@dataclass(frozen=True)
class JudgeAgreement:
    outputs: int  # outputs both scored: by the judge and with a human z-score
    systems: int  # systems among them
    items: int  # the bootstrap's units
    pairs: int  # human-judged pairs the human ordered (ties left out)
    figures: dict[str, Figure]  # FIGURES
    judge_mean: np.ndarray  # float64[S]: on the z scale, over the system's outputs both scored
    human_mean: np.ndarray  # float64[S]: mean human z; NaN for a system without such outputs
    bias: np.ndarray  # float64[S]: judge_mean - human_mean
    bias_lower: np.ndarray  # float64[S]
    bias_upper: np.ndarray  # float64[S]
    labelled: np.ndarray  # int64[S]: outputs both scored
    resamples: int
    confidence: float


@dataclass(frozen=True)
class _Data:
    """The inputs numbered and grouped once: the sums a resample needs are products of its
    item weights with these."""

    judge: np.ndarray  # float64[M]
    score: np.ndarray  # float64[J]
    output_item: np.ndarray  # int64[M], items numbered 0..I-1
    judgment_item: np.ndarray  # int64[J]
    annotator: np.ndarray  # int64[J], numbered 0..A-1
    output_system: np.ndarray  # int64[M]
    by_annotator: sparse.csr_matrix  # A x J
    by_output: sparse.csr_matrix  # M x J
    by_system: sparse.csr_matrix  # S x M
    pair_count: np.ndarray  # float64[I]: ordered human pairs per item
    pair_agreed: np.ndarray  # float64[I]: of them, agreed (judge ties 0.5)
    # float64[1, M]: the mean human z-score per output on the data (the output-level
    # figures' in every resample), and 1.0 where the output has one
    human: np.ndarray
    has_human: np.ndarray
    judged: np.ndarray  # int64[]: the outputs with a human score on the data

    @property
    def n_items(self) -> int:
        return len(self.pair_count)


def judge_agreement(
    output_system: np.ndarray,
    output_item: np.ndarray,
    judge: np.ndarray,
    judged_output: np.ndarray,
    annotator: np.ndarray,
    score: np.ndarray,
    hit: np.ndarray,
    n_systems: int,
    rng: np.random.Generator,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> JudgeAgreement | None:
    """Outputs numbered 0..M-1 (their system, item and the judge's score), one entry per
    judgment (the output judged, its annotator, score and HIT: the assignment, one
    annotator's take of one HIT). None until MIN_OUTPUTS outputs of two systems have both a
    judge score and a human z-score."""
    data = _prepare(
        output_system, output_item, judge, judged_output, annotator, score, hit, n_systems
    )
    point = _statistics(data, np.ones((1, data.n_items)))
    labelled = point["labelled"][0].astype(np.int64)
    if labelled.sum() < MIN_OUTPUTS or (labelled > 0).sum() < 2:
        return None
    draws = _bootstrap(data, rng, resamples)
    tail = (1 - confidence) / 2 * 100
    figures = {name: _figure(point[name][0], draws[name], tail) for name in FIGURES}
    bias = point["bias"][0]
    lower, upper = np.full(n_systems, np.nan), np.full(n_systems, np.nan)
    for s in np.flatnonzero(labelled > 0):
        found = _percentiles(draws["bias"][:, s], tail, bias[s])
        if found is not None:
            lower[s], upper[s] = found
    return JudgeAgreement(
        outputs=int(labelled.sum()),
        systems=int((labelled > 0).sum()),
        items=data.n_items,
        pairs=int(data.pair_count.sum()),
        figures=figures,
        judge_mean=point["judge_mean"][0],
        human_mean=point["human_mean"][0],
        bias=bias,
        bias_lower=lower,
        bias_upper=upper,
        labelled=labelled,
        resamples=resamples,
        confidence=confidence,
    )


def _figure(value: float, draws: np.ndarray, tail: float) -> Figure:
    if not np.isfinite(value):
        return Figure(None, None, None)
    found = _percentiles(draws, tail, value)
    if found is None:
        return Figure(float(value), None, None)
    return Figure(float(value), *found)


def _percentiles(draws: np.ndarray, tail: float, value: float) -> tuple[float, float] | None:
    """The percentile interval, stretched to the estimate where it misses it: a rank
    correlation of a resample that repeats outputs counts each repeat as a pair in perfect
    agreement, so with few items the resamples' rho sit above the data's and their
    percentiles can exclude it. An interval that does not contain its own figure would
    read as a contradiction; stretched, it only errs wide."""
    defined = draws[np.isfinite(draws)]
    if len(defined) == 0:
        return None
    low, high = np.percentile(defined, [tail, 100 - tail])
    return float(min(low, value)), float(max(high, value))


def _bootstrap(data: _Data, rng: np.random.Generator, resamples: int) -> dict[str, np.ndarray]:
    """Each figure for each resample, computed a chunk of resamples at a time so that no
    array passes about MAX_CELLS entries."""
    widest = max(len(data.score), len(data.judge), data.by_system.shape[0] ** 2, 1)
    chunk = max(1, MAX_CELLS // widest)
    parts: list[dict[str, np.ndarray]] = []
    n = data.n_items
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        drawn = rng.integers(0, n, size=(rows, n))
        offsets = (drawn + n * np.arange(rows)[:, None]).ravel()
        weights = np.bincount(offsets, minlength=rows * n).reshape(rows, n)
        parts.append(_statistics(data, weights.astype(np.float64)))
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def _prepare(
    output_system: np.ndarray,
    output_item: np.ndarray,
    judge: np.ndarray,
    judged_output: np.ndarray,
    annotator: np.ndarray,
    score: np.ndarray,
    hit: np.ndarray,
    n_systems: int,
) -> _Data:
    output_system = np.asarray(output_system, dtype=np.int64)
    judge = np.asarray(judge, dtype=np.float64)
    judged_output = np.asarray(judged_output, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    _, output_item = np.unique(np.asarray(output_item), return_inverse=True)
    _, annotator = np.unique(np.asarray(annotator), return_inverse=True)
    n_outputs, n_items = len(judge), int(output_item.max(initial=-1)) + 1
    n_annotators = int(annotator.max(initial=-1)) + 1
    judgments = np.arange(len(score))
    count, agreed = _pairs(judge, judged_output, score, np.asarray(hit), output_item, n_items)
    data = _Data(
        judge=judge,
        score=score,
        output_item=output_item,
        judgment_item=output_item[judged_output],
        annotator=annotator,
        output_system=output_system,
        by_annotator=_grouping(annotator, judgments, n_annotators, len(score)),
        by_output=_grouping(judged_output, judgments, n_outputs, len(score)),
        by_system=_grouping(output_system, np.arange(n_outputs), n_systems, n_outputs),
        pair_count=count,
        pair_agreed=agreed,
        human=np.empty((1, 0)),
        has_human=np.empty((1, 0)),
        judged=np.empty(0, dtype=np.int64),
    )
    human, has_human = _human_scores(data, np.ones((1, len(score))))
    judged = np.flatnonzero(has_human[0])
    return replace(data, human=human, has_human=has_human, judged=judged)


def _grouping(
    group: np.ndarray, member: np.ndarray, groups: int, members: int
) -> sparse.csr_matrix:
    from scipy import sparse  # noqa: PLC0415 - scipy loads slowly

    ones = np.ones(len(member))
    return sparse.csr_matrix((ones, (group, member)), shape=(groups, members))


def _pairs(
    judge: np.ndarray,
    judged_output: np.ndarray,
    score: np.ndarray,
    hit: np.ndarray,
    output_item: np.ndarray,
    n_items: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: the human-judged pairs with a human order, and how many of them the judge
    orders the same way (a judge tie counts half)."""
    order = np.lexsort((judged_output, hit))
    hit, output, value = hit[order], judged_output[order], score[order]
    first: list[np.ndarray] = []
    second: list[np.ndarray] = []
    for gap in range(1, len(order)):
        same = hit[gap:] == hit[:-gap]
        if not same.any():
            break  # sorted by HIT: no HIT has more than `gap` judgments
        first.append(np.flatnonzero(same))
        second.append(first[-1] + gap)
    a = np.concatenate(first) if first else np.empty(0, dtype=np.int64)
    b = np.concatenate(second) if second else np.empty(0, dtype=np.int64)
    human = np.sign(value[a] - value[b])
    kept = (human != 0) & (output[a] != output[b])
    a, b, human = output[a[kept]], output[b[kept]], human[kept]
    machine = np.sign(judge[a] - judge[b])
    agreed = np.where(machine == 0, 0.5, (machine == human).astype(np.float64))
    item = output_item[a]
    return (
        np.bincount(item, minlength=n_items).astype(np.float64),
        np.bincount(item, agreed, minlength=n_items),
    )


def _statistics(data: _Data, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Every figure for each row of item weights (rows x I): how often each item was drawn."""
    on_output = weights[:, data.output_item]
    judge = _standardised(data.judge, on_output)
    human, has_human = _human_scores(data, weights[:, data.judgment_item])
    with np.errstate(invalid="ignore", divide="ignore"):
        agreed = (weights @ data.pair_agreed) / (weights @ data.pair_count)
    return {
        **_system_figures(data, judge, human, on_output * has_human),
        **_output_figures(data, judge, data.human, on_output * data.has_human),
        "pairwise_agreement": agreed,
    }


def _system_means(
    by_system: sparse.csr_matrix, judge: np.ndarray, human: np.ndarray, labelled: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(outputs both scored, the judge's mean, the humans' mean), rows x S."""
    counts = _sum_by(by_system, labelled)
    with np.errstate(invalid="ignore", divide="ignore"):
        judge_mean = _sum_by(by_system, labelled * judge) / counts
        human_mean = _sum_by(by_system, labelled * np.where(labelled > 0, human, 0.0))
        return counts, judge_mean, human_mean / counts


def _system_figures(
    data: _Data, judge: np.ndarray, human: np.ndarray, labelled: np.ndarray
) -> dict[str, np.ndarray]:
    counts, judge_mean, human_mean = _system_means(data.by_system, judge, human, labelled)
    present = (counts > 0).astype(np.float64)
    return {
        "labelled": counts,
        "judge_mean": judge_mean,
        "human_mean": human_mean,
        "bias": judge_mean - human_mean,
        "system_spearman": _pearson(
            _midranks(judge_mean, present), _midranks(human_mean, present), present
        ),
        "system_kendall": _kendall(judge_mean, human_mean, present),
    }


def _output_figures(
    data: _Data, judge: np.ndarray, human: np.ndarray, labelled: np.ndarray
) -> dict[str, np.ndarray]:
    # Only the outputs with a human score on the data count here: the rest are left out
    # before the sorts (a judge may have scored four times as many outputs as humans).
    kept = data.judged
    judge, human, labelled = judge[:, kept], human[:, kept], labelled[:, kept]
    human = np.where(labelled > 0, human, 0.0)
    by_system = data.by_system[:, kept]
    _, judge_mean, human_mean = _system_means(by_system, judge, human, labelled)
    system = data.output_system[kept]
    within_judge = judge - np.nan_to_num(judge_mean)[:, system]
    within_human = human - np.nan_to_num(human_mean)[:, system]
    return {
        "output_pearson": _pearson(judge, human, labelled),
        "output_spearman": _pearson(
            _midranks(judge, labelled), _midranks(human, labelled), labelled
        ),
        "within_systems_pearson": _pearson(within_judge, within_human, labelled),
    }


def _sum_by(grouping: sparse.csr_matrix, values: np.ndarray) -> np.ndarray:
    """rows x groups: each row's values (rows x members) summed per group."""
    return np.asarray(grouping @ values.T).T


def _human_scores(data: _Data, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows x M mean human z-score per output, 1.0 where it has one) with the annotators'
    means and standard deviations (ddof 1) taken over each row's weighted judgments."""
    score, annotator = data.score, data.annotator
    counts = _sum_by(data.by_annotator, weights)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = _sum_by(data.by_annotator, weights * score) / counts
        deviation = score - mean[:, annotator]
        std = np.sqrt(_sum_by(data.by_annotator, weights * deviation**2) / (counts - 1))
        # Equal scores may leave a rounding residue instead of an exact zero (wmt.z_scores).
        left_out = (counts < 2) | ~(std > 1e-12 * np.maximum(np.abs(mean), 1.0))
        kept = ~left_out[:, annotator]
        z = np.where(kept, deviation / std[:, annotator], 0.0)
        judged = _sum_by(data.by_output, kept.astype(np.float64))
        # An output drawn twice has its judgments drawn twice: its mean is the same.
        mean_z = _sum_by(data.by_output, z) / judged
    return np.nan_to_num(mean_z), (judged > 0).astype(np.float64)


def _standardised(judge: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The judge's scores minus their weighted mean over their standard deviation (ddof 0);
    a constant judge becomes 0 everywhere."""
    total = weights.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (weights * judge).sum(axis=1, keepdims=True) / total
        deviation = judge - mean
        std = np.sqrt((weights * deviation**2).sum(axis=1, keepdims=True) / total)
    constant = ~(std > 1e-12 * np.maximum(np.abs(mean), 1.0))
    return np.where(constant, 0.0, deviation / np.where(constant, 1.0, std))


def _pearson(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row, Pearson's r of x and y with the weights (counts of the expanded sample); NaN
    where either is constant."""
    x, y = np.where(weights > 0, x, 0.0), np.where(weights > 0, y, 0.0)
    total = weights.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_x = (weights * x).sum(axis=1, keepdims=True) / total
        mean_y = (weights * y).sum(axis=1, keepdims=True) / total
        dx, dy = x - mean_x, y - mean_y
        var_x, var_y = (weights * dx**2).sum(axis=1), (weights * dy**2).sum(axis=1)
        r = (weights * dx * dy).sum(axis=1) / np.sqrt(var_x * var_y)
        spread_x, spread_y = np.sqrt(var_x / total[:, 0]), np.sqrt(var_y / total[:, 0])
    constant = ~(spread_x > 1e-12 * np.maximum(np.abs(mean_x[:, 0]), 1.0)) | ~(
        spread_y > 1e-12 * np.maximum(np.abs(mean_y[:, 0]), 1.0)
    )
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def _midranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row, each value's rank among the weighted values (an entry of weight w stands
    for w equal values), ties sharing the mean of the ranks they span: scipy's rankdata on
    the expanded sample. Entries of weight 0 get a rank that counts for nothing."""
    values = np.where(weights > 0, values, 0.0)
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    weight = np.take_along_axis(weights, order, axis=1)
    through = np.cumsum(weight, axis=1)
    before = through - weight
    change = ordered[:, 1:] != ordered[:, :-1]
    starts = np.concatenate([np.ones((len(values), 1), bool), change], axis=1)
    ends = np.concatenate([change, np.ones((len(values), 1), bool)], axis=1)
    group_before = np.maximum.accumulate(np.where(starts, before, 0.0), axis=1)
    group_through = np.minimum.accumulate(np.where(ends, through, np.inf)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty_like(values)
    np.put_along_axis(ranks, order, group_before + (group_through - group_before + 1) / 2, axis=1)
    return ranks


def _kendall(x: np.ndarray, y: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Per row, Kendall's tau-b of x and y over the entries present; NaN where either has
    every present entry equal."""
    both = present[:, :, None] * present[:, None, :]
    x, y = np.nan_to_num(x), np.nan_to_num(y)
    sign_x = np.sign(x[:, :, None] - x[:, None, :]) * both
    sign_y = np.sign(y[:, :, None] - y[:, None, :]) * both
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (sign_x * sign_y).sum(axis=(1, 2)) / np.sqrt(
            np.abs(sign_x).sum(axis=(1, 2)) * np.abs(sign_y).sum(axis=(1, 2))
        )
    return np.where(np.isfinite(tau), tau, np.nan)
