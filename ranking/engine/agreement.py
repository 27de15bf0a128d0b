"""How far annotators agree, on RankME judgments. numpy and the `krippendorff` package; no
Django.

Magnitudes are not comparable between annotators (each picks a scale around the standard's
100), and rankings use only the order within a HIT, so agreement is measured on that order:
within each HIT the k scores become ranks normalised to [0, 1], worst 0 and best 1. Tied
scores share the mean of the ranks they span (fractional ranking): of five outputs, three
tied at the top get (2 + 3 + 4) / 3 = 3 of 0..4, normalised 0.75; a HIT whose scores are all
equal gives 0.5 to each.

- Krippendorff's alpha, interval level: units are (item, system) pairs, their values the
  normalised ranks the annotators gave (coders = annotators). Only units judged at least
  twice carry information; the package leaves the others out too.
- Choices (pairwise preferences, best-worst of k: `on="choices"`): Krippendorff's alpha,
  nominal level, on what was chosen. A page of two is a unit (item, the two systems) whose
  value is which of them won, or a tie (coded 0: the lower-numbered system won, 0.5 a
  tie, 1 the other won); on a page of more, each (item, system) is a unit whose value is
  best, neither or worst (its score 1, 0.5, 0).
- Its 95% interval: a percentile bootstrap over items (an item's units are drawn together:
  the judgments of one HIT depend on each other), seeded, ROUNDS rounds.
- Per annotator: Pearson's r between the annotator's normalised ranks and the mean of the
  other annotators' on the same units, with the number of such units. The others are the
  judgments rankings use; the annotator's own are all they submitted, so an annotator
  whose HITs are flagged or who is excluded still shows how they compare.
"""

from dataclasses import dataclass

import krippendorff
import numpy as np

ROUNDS = 1000
# What alpha compares: the ranks within each HIT, or the scores themselves.
AGREEMENT_VALUES = ("ranks", "scores", "choices")
# With fewer shared units a correlation says little (with two it is always +1 or -1).
MIN_SHARED_UNITS = 3


@dataclass(frozen=True)
class Judgments:
    """One entry per judgment, as arrays of equal length."""

    hit: np.ndarray  # int: the submitted HIT (assignment) it belongs to
    annotator: np.ndarray  # int
    item: np.ndarray  # int
    system: np.ndarray  # int
    score: np.ndarray  # float
    counted: np.ndarray  # bool: rankings use it


@dataclass(frozen=True)
class Alpha:
    value: float | None  # None where alpha is undefined (no unit judged twice, one value)
    low: float | None  # 95% bootstrap interval
    high: float | None
    units: int  # units judged at least twice
    judgments: int  # the judgments in those units
    rounds: int


@dataclass(frozen=True)
class PerAnnotator:
    annotator: np.ndarray  # int: the annotators, ascending
    correlation: np.ndarray  # float: r with the others' mean; NaN: too few shared, no spread
    shared_units: np.ndarray  # int: units the annotator shares with a counted other


@dataclass(frozen=True)
class Agreement:
    alpha: Alpha
    annotators: PerAnnotator


LEVELS = ("interval", "nominal")


def measure_agreement(
    judgments: Judgments, rng: np.random.Generator, rounds: int = ROUNDS, on: str = "ranks"
) -> Agreement:
    """On the within-HIT ranks (`on="ranks"`, RankME's magnitudes); on the scores as given,
    for a form whose scores share one absolute scale, a 0-100 slider (`on="scores"`): the
    same interval alpha, bootstrap and per-annotator r; or on what was chosen (`on="choices"`,
    pairwise and best-worst): nominal alpha."""
    if on not in AGREEMENT_VALUES:
        raise ValueError(f"agreement on {on!r}: one of {', '.join(AGREEMENT_VALUES)}")
    level = "nominal" if on == "choices" else "interval"
    if on == "choices":
        unit, value = choice_units(judgments)
    elif on == "scores":
        value = judgments.score.astype(np.float64)
        unit = unit_index(judgments.item, judgments.system)
    else:
        value = normalised_ranks(judgments.hit, judgments.score)
        unit = unit_index(judgments.item, judgments.system)
    counted = judgments.counted
    alpha = alpha_with_interval(
        unit[counted], judgments.item[counted], value[counted], rng, rounds, level
    )
    annotators = agreement_with_others(judgments.annotator, unit, value, counted)
    return Agreement(alpha, annotators)


def choice_units(judgments: Judgments) -> tuple[np.ndarray, np.ndarray]:
    """(unit, value) per judgment of choices (scores 1 best or winner, 0 worst or loser,
    0.5 neither or tie): a HIT of two gives both its judgments the unit (item, the two
    systems) and the value of which won (0 the lower-numbered system, 1 the other, 0.5 a
    tie), on one of them only (NaN on the other); a larger HIT gives each judgment the
    unit (item, system) and its score."""
    n = len(judgments.hit)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    _, hit_at, sizes = np.unique(judgments.hit, return_inverse=True, return_counts=True)
    hit_at = hit_at.reshape(-1)
    pair = sizes[hit_at] == 2
    low = np.full(len(sizes), np.iinfo(np.int64).max)
    high = np.full(len(sizes), np.iinfo(np.int64).min)
    np.minimum.at(low, hit_at, judgments.system)
    np.maximum.at(high, hit_at, judgments.system)
    low_score = np.zeros(len(sizes))
    is_low = judgments.system == low[hit_at]
    np.add.at(low_score, hit_at[is_low], judgments.score[is_low])
    value = np.where(pair, 1.0 - low_score[hit_at], judgments.score.astype(np.float64))
    # A pair's value once per HIT: its other judgment is left out (NaN), as a lone one is.
    value[pair & ~is_low] = np.nan
    first = np.where(pair, low[hit_at], judgments.system)
    second = np.where(pair, high[hit_at], -1)
    keys = np.stack([judgments.item, first, second], axis=1)
    return np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1), value


def normalised_ranks(hit: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Each score's rank within its HIT, 0 (lowest) to 1 (highest), ties sharing their mean
    rank; NaN in a HIT of one judgment."""
    if len(hit) == 0:
        return np.zeros(0)
    order = np.lexsort((score, hit))
    h, s = hit[order], score[order]
    position = np.arange(len(h))
    hit_starts = np.r_[True, h[1:] != h[:-1]]
    tie_starts = hit_starts | np.r_[True, s[1:] != s[:-1]]
    first_of_hit, hit_size = group_starts_and_sizes(hit_starts, position)
    first_of_tie, tie_size = group_starts_and_sizes(tie_starts, position)
    mean_rank = first_of_tie - first_of_hit + (tie_size - 1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        normalised = np.where(hit_size > 1, mean_rank / (hit_size - 1), np.nan)
    result = np.empty(len(h))
    result[order] = normalised
    return result


def group_starts_and_sizes(
    starts: np.ndarray, position: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For sorted entries and a mask of where each group starts: each entry's group's first
    position and size."""
    first = np.maximum.accumulate(np.where(starts, position, 0))
    group = np.cumsum(starts) - 1
    return first, np.bincount(group)[group]


def unit_index(item: np.ndarray, system: np.ndarray) -> np.ndarray:
    """A number per (item, system) pair."""
    if len(item) == 0:
        return np.zeros(0, dtype=np.int64)
    pairs = np.stack([item, system], axis=1)
    return np.unique(pairs, axis=0, return_inverse=True)[1].reshape(-1)


# Krippendorff's alpha ---------------------------------------------------------------------


def alpha_with_interval(
    unit: np.ndarray,
    item: np.ndarray,
    value: np.ndarray,
    rng: np.random.Generator,
    rounds: int,
    level: str = "interval",
) -> Alpha:
    domain, counts, unit_item = value_counts(unit, item, value)
    if len(counts) == 0 or len(domain) < 2:
        return Alpha(None, None, None, len(counts), int(counts.sum()), 0)
    replicates = bootstrap_alphas(counts, unit_item, domain, rng, rounds, level)
    finite = replicates[np.isfinite(replicates)]
    low, high = np.percentile(finite, [2.5, 97.5]) if len(finite) else (None, None)
    return Alpha(
        interval_alpha(counts, domain, level),
        none_or_float(low),
        none_or_float(high),
        len(counts),
        int(counts.sum()),
        rounds,
    )


def value_counts(
    unit: np.ndarray, item: np.ndarray, value: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values that occur, the (units, values) table of how often each unit got each
    value (units judged at least twice only), and each of those units' item."""
    keep = ~np.isnan(value)
    unit, item, value = unit[keep], item[keep], value[keep]
    domain, value_at = np.unique(value, return_inverse=True)
    units, unit_at = np.unique(unit, return_inverse=True)
    counts = np.zeros((len(units), len(domain)), dtype=np.int64)
    np.add.at(counts, (unit_at, value_at), 1)
    unit_item = np.zeros(len(units), dtype=item.dtype)
    unit_item[unit_at] = item
    pairable = counts.sum(axis=1) >= 2
    return domain, counts[pairable], unit_item[pairable]


def interval_alpha(counts: np.ndarray, domain: np.ndarray, level: str = "interval") -> float | None:
    """The package's alpha of a (units, values) table, at the interval (or nominal) level."""
    with np.errstate(divide="ignore", invalid="ignore"):
        result = krippendorff.alpha(
            value_counts=counts,
            value_domain=domain,
            level_of_measurement="nominal" if level == "nominal" else "interval",
        )
    return none_or_float(result)


def bootstrap_alphas(
    counts: np.ndarray,
    unit_item: np.ndarray,
    domain: np.ndarray,
    rng: np.random.Generator,
    rounds: int,
    level: str = "interval",
) -> np.ndarray:
    """Alpha of `rounds` resamples of the items, drawn with replacement as many times as
    there are items, each draw bringing all the item's units (NaN where undefined).

    Alpha is a ratio of sums over units of their coincidences (the package's own arithmetic,
    in `_coincidences`), so a resample's alpha follows from each item's sums weighted by how
    often it was drawn: the number the package gives on the resampled units (the tests hold
    them to 1e-12), for a product of a vector and a matrix instead of the package's pass
    over every unit, which took 2.5 to 14 ms a round on E2E's quality ratings."""
    per_item = item_coincidences(counts, unit_item)
    if level == "nominal":
        distance = (domain[:, None] != domain[None, :]).astype(np.float64)
    else:
        distance = (domain[:, None] - domain[None, :]) ** 2
    items, size = per_item.shape[0], len(domain)
    alphas = np.empty(rounds)
    for round_ in range(rounds):
        drawn = np.bincount(rng.integers(0, items, size=items), minlength=items)
        alphas[round_] = alpha_of_coincidences((drawn @ per_item).reshape(size, size), distance)
    return alphas


def item_coincidences(counts: np.ndarray, unit_item: np.ndarray) -> np.ndarray:
    """Each item's coincidence matrix, flattened: over its units, (n_c n_v - [c = v] n_c)
    / (m - 1), n_c the unit's count of value c and m its number of values (Krippendorff)."""
    units, size = counts.shape
    pairs = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(size)
    per_unit = pairs / (counts.sum(axis=1) - 1)[:, None, None]
    _, item_at = np.unique(unit_item, return_inverse=True)
    per_item = np.zeros((item_at.max() + 1, size * size))
    np.add.at(per_item, item_at, per_unit.reshape(units, size * size))
    return per_item


def alpha_of_coincidences(observed: np.ndarray, distance: np.ndarray) -> float:
    """1 - observed / expected disagreement, as the package computes it from coincidences."""
    n_v = observed.sum(axis=0)
    expected = (np.outer(n_v, n_v) - np.diag(n_v)) / (n_v.sum() - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(1 - (observed * distance).sum() / (expected * distance).sum())


def none_or_float(value: float | np.floating | None) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


# Per annotator -------------------------------------------------------------------------------


def agreement_with_others(
    annotator: np.ndarray, unit: np.ndarray, value: np.ndarray, counted: np.ndarray
) -> PerAnnotator:
    keep = ~np.isnan(value)
    annotator, unit, value = annotator[keep], unit[keep], value[keep]
    counted = counted[keep].astype(float)
    annotators, who = np.unique(annotator, return_inverse=True)
    # One entry per (annotator, unit): the annotator's mean value there, and the part of the
    # unit's counted values that is theirs, to be left out of "the others".
    pairs, pair_at = np.unique(np.stack([who, unit], axis=1), axis=0, return_inverse=True)
    pair_at = pair_at.reshape(-1)
    own_n = np.bincount(pair_at)
    own_mean = np.bincount(pair_at, weights=value) / own_n
    own_counted = np.bincount(pair_at, weights=counted)
    own_counted_sum = np.bincount(pair_at, weights=value * counted)
    unit_counted = np.bincount(unit, weights=counted)[pairs[:, 1]]
    unit_sum = np.bincount(unit, weights=value * counted)[pairs[:, 1]]
    others = unit_counted - own_counted
    shared = others > 0
    others_mean = (unit_sum[shared] - own_counted_sum[shared]) / others[shared]
    r, n = grouped_pearson(pairs[shared, 0], own_mean[shared], others_mean, len(annotators))
    return PerAnnotator(annotators, r, n)


def grouped_pearson(
    group: np.ndarray, x: np.ndarray, y: np.ndarray, groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """Pearson's r of x and y within each group (NaN where fewer than MIN_SHARED_UNITS
    entries or no spread), and the entries per group."""
    n = np.bincount(group, minlength=groups)

    def total(values: np.ndarray) -> np.ndarray:
        return np.bincount(group, weights=values, minlength=groups)

    sx, sy = total(x), total(y)
    sxx, syy, sxy = total(x * x), total(y * y), total(x * y)
    with np.errstate(divide="ignore", invalid="ignore"):
        covariance = n * sxy - sx * sy
        spread = (n * sxx - sx * sx) * (n * syy - sy * sy)
        # Sums of squares of identical values can come out a hair above zero.
        defined = (n >= MIN_SHARED_UNITS) & (spread > 1e-12 * np.maximum(n, 1) ** 4)
        r = np.where(defined, covariance / np.sqrt(spread), np.nan)
    return np.clip(r, -1, 1), n


# What annotators did -------------------------------------------------------------------------


@dataclass(frozen=True)
class HitsDone:
    annotator: np.ndarray  # int: the annotators, ascending
    hits: np.ndarray  # int: HITs submitted
    flagged: np.ndarray  # int: of those, flagged
    median_seconds: np.ndarray  # float: NaN where no HIT has its times


def hits_done(annotator: np.ndarray, seconds: np.ndarray, flagged: np.ndarray) -> HitsDone:
    """Per annotator, from one entry per submitted HIT."""
    annotators, who = np.unique(annotator, return_inverse=True)
    groups = len(annotators)
    timed = ~np.isnan(seconds)
    return HitsDone(
        annotators,
        np.bincount(who, minlength=groups),
        np.bincount(who, weights=flagged.astype(float), minlength=groups).astype(np.int64),
        group_medians(who[timed], seconds[timed], groups),
    )


def group_medians(group: np.ndarray, values: np.ndarray, groups: int) -> np.ndarray:
    """The median of `values` within each group 0..groups-1; NaN for an empty group."""
    order = np.lexsort((values, group))
    size = np.bincount(group, minlength=groups)
    start = np.cumsum(size) - size
    sorted_values = np.r_[values[order], np.nan]  # an empty group reads the NaN at the end
    low = np.where(size > 0, start + (size - 1) // 2, len(values))
    high = np.where(size > 0, start + size // 2, len(values))
    return (sorted_values[low] + sorted_values[high]) / 2
