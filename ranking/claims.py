"""What a table claims, read as its reader reads it: one system above another wherever the
two are in different clusters, their rank ranges do not overlap, or their intervals do not
overlap (views that show intervals). The benchmark of calibration, the permutation check of
the published views and the results page's comparison of a published view with the
calibrated verdict all read tables through this one rule. No Django: rows are anything with
SystemResult's fields (stored results, ResultRow, a bundle's lines)."""

import math
from collections.abc import Hashable, Iterable
from typing import Any

Pair = tuple[Hashable, Hashable]  # (above, below)


def claimed_pairs(rows: Iterable[Any]) -> set[Pair]:
    """The (above, below) pairs of systems the table orders."""
    rows = list(rows)
    return {
        (upper.system, lower.system)
        for upper in rows
        for lower in rows
        if upper is not lower and apart(upper, lower)
    }


def apart(upper: Any, lower: Any) -> bool:
    if upper.cluster < lower.cluster or upper.rank_hi < lower.rank_lo:
        return True
    lo, hi = getattr(upper, "ci_lo", None), getattr(lower, "ci_hi", None)
    return (
        lo is not None and hi is not None and not math.isnan(lo) and not math.isnan(hi) and lo > hi
    )


def orders_anything(rows: Iterable[Any]) -> bool:
    return bool(claimed_pairs(rows))
