"""The attention checks' verdict on one annotator, from their scores alone.

Each check pairs an original output with the degraded copy shown beside it in the same HIT
(nlgdata.degrade). As Appraise does with its "BAD references", a one-sided Mann-Whitney U
test asks whether the annotator's scores of the originals are higher than those of the
copies; the annotator passes when p is at most the campaign's threshold (Appraise: 0.10).

With few checks even a perfect annotator cannot reach a small p (with n checks and no ties
the smallest p is 1 / C(2n, n): 0.5, 0.17, 0.05 for n = 1, 2, 3), so nobody fails before
they have done enough checks to pass; until then the verdict is open.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb


@dataclass(frozen=True)
class AttentionVerdict:
    checks: int
    p: float | None  # None before the first check
    failed: bool  # enough checks to pass, and p above the threshold


def checks_needed(threshold: float) -> int:
    """The fewest checks with which a perfect annotator's p can be at most `threshold`."""
    n = 1
    while 1 / comb(2 * n, n) > threshold:
        n += 1
    return n


def attention_verdict(
    originals: Sequence[float], degraded: Sequence[float], threshold: float
) -> AttentionVerdict:
    """The verdict from the scores of the originals and of their degraded copies (one of
    each per check)."""
    checks = len(degraded)
    if checks == 0:
        return AttentionVerdict(0, None, False)
    if len(set(originals) | set(degraded)) == 1:
        p = 1.0  # every score equal: nothing tells the originals from their copies
    else:
        from scipy.stats import mannwhitneyu  # noqa: PLC0415 - scipy loads slowly

        p = float(mannwhitneyu(originals, degraded, alternative="greater").pvalue)
    return verdict_of(checks, p, threshold)


def verdict_of(checks: int, p: float | None, threshold: float) -> AttentionVerdict:
    """The verdict of a test already run: `checks` checks gave `p` (None: no checks)."""
    failed = p is not None and checks >= checks_needed(threshold) and p > threshold
    return AttentionVerdict(checks, p, failed)


def describe_verdict(checks: int, p: float | None, threshold: float) -> str:
    """The verdict as organisers read it, with the rule it follows."""
    rule = f"passes at p ≤ {threshold:g}"
    if p is None:
        return f"no checks yet ({rule})"
    needed = checks_needed(threshold)
    if checks < needed:
        return f"open: p = {p:.3f} after {checks} of the {needed} checks needed ({rule})"
    verdict = "failed" if p > threshold else "passed"
    return f"{verdict}: p = {p:.3f} over {checks} checks ({rule})"
