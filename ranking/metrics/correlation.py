"""System-level correlation of an automatic metric with human scores (TrueSkill mu):
Spearman's rho and Kendall's tau-b, with scipy's two-sided p-values."""

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

MIN_SYSTEMS = 3


@dataclass(frozen=True)
class Correlation:
    systems: int
    spearman: float | None
    spearman_p: float | None
    kendall: float | None
    kendall_p: float | None


def _number(value: float) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def correlate(metric: Sequence[float], human: Sequence[float]) -> Correlation | None:
    """None with fewer than MIN_SYSTEMS systems; None in a field where it is undefined
    (all systems equal on one side)."""
    if len(metric) != len(human):
        raise ValueError(f"{len(metric)} metric values for {len(human)} human scores")
    if len(metric) < MIN_SYSTEMS:
        return None
    from scipy import stats  # noqa: PLC0415 - scipy loads slowly

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        rho = stats.spearmanr(metric, human)
        tau = stats.kendalltau(metric, human)
    return Correlation(
        systems=len(metric),
        spearman=_number(rho.statistic),
        spearman_p=_number(rho.pvalue),
        kendall=_number(tau.statistic),
        kendall_p=_number(tau.pvalue),
    )
