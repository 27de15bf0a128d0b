"""Error-span annotation (ESA; Kocmi et al., WMT 2024): the errors an annotator marked in an
output, minor or major, and the 0-100 score they then gave it.

- The ranking views (z-scores, comparisons within a page) use the score as given
  (`esa_score`): ESA's spans prime the annotator's score, they are not subtracted from it.
- Per system, errors per 100 words by severity: the spans marked over all its judgments,
  divided by the words of the outputs judged (counted once per judgment, so an output
  judged twice counts twice, as its spans do), times 100. Words are whitespace tokens
  (`count_words`).
"""

from dataclasses import dataclass

import numpy as np


def count_words(text: str) -> int:
    """Whitespace tokens: what 'per 100 words' counts."""
    return len(text.split())


def esa_score(score: float) -> float:
    """The score the ranking views use for an ESA judgment: the 0-100 score as given."""
    return float(score)


@dataclass(frozen=True)
class ErrorRates:
    """Per system, indexed by system number; NaN for a system without words judged."""

    judgments: np.ndarray  # int64[n]
    words: np.ndarray  # int64[n]: words of the outputs judged, once per judgment
    minor: np.ndarray  # int64[n]: minor spans marked
    major: np.ndarray  # int64[n]
    minor_per_100_words: np.ndarray  # float64[n]
    major_per_100_words: np.ndarray  # float64[n]
    errors_per_100_words: np.ndarray  # float64[n]: minor and major together
    mean_score: np.ndarray  # float64[n]: mean of the judgments' scores


def error_rates(
    system: np.ndarray,
    words: np.ndarray,
    minor: np.ndarray,
    major: np.ndarray,
    score: np.ndarray,
    n_systems: int,
) -> ErrorRates:
    """From one row per judgment: its system, the words of the output judged, the minor and
    major spans marked and the score given."""
    system = np.asarray(system, dtype=np.int64)
    columns = [np.asarray(c) for c in (words, minor, major, score)]
    if system.ndim != 1 or any(c.shape != system.shape for c in columns):
        raise ValueError("system, words, minor, major and score must be 1-d, of equal length")

    def total(values: np.ndarray) -> np.ndarray:
        return np.bincount(system, values, minlength=n_systems)

    judgments = np.bincount(system, minlength=n_systems).astype(np.int64)
    n_words, n_minor, n_major = (total(c).astype(np.int64) for c in columns[:3])
    with np.errstate(invalid="ignore", divide="ignore"):
        per_word = 100.0 / np.where(n_words > 0, n_words, np.nan)
        mean_score = total(columns[3].astype(np.float64)) / judgments
    return ErrorRates(
        judgments=judgments,
        words=n_words,
        minor=n_minor,
        major=n_major,
        minor_per_100_words=n_minor * per_word,
        major_per_100_words=n_major * per_word,
        errors_per_100_words=(n_minor + n_major) * per_word,
        mean_score=mean_score,
    )
