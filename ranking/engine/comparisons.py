"""Pairwise comparisons from RankME HITs: only the order of the scores is used."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Comparisons:
    """One row per pairwise comparison.

    For a draw, ``winner`` and ``loser`` only name the two systems (in HIT position order).
    """

    winner: np.ndarray  # int32[n]
    loser: np.ndarray  # int32[n]
    draw: np.ndarray  # bool[n]
    # int64[n]: the design's independent unit each comparison came from (the item of its
    # page: every page of an input shares its outputs), for views that resample or permute
    # whole units; None where not known.
    unit: np.ndarray | None = None

    def __post_init__(self) -> None:
        # Normalise dtypes once here so the compiled kernels see one signature.
        object.__setattr__(self, "winner", np.ascontiguousarray(self.winner, dtype=np.int32))
        object.__setattr__(self, "loser", np.ascontiguousarray(self.loser, dtype=np.int32))
        object.__setattr__(self, "draw", np.ascontiguousarray(self.draw, dtype=np.bool_))
        n = len(self.winner)
        if self.winner.ndim != 1 or len(self.loser) != n or len(self.draw) != n:
            raise ValueError("winner, loser and draw must be 1-d arrays of equal length")
        if np.any(self.winner == self.loser):
            raise ValueError("a system cannot be compared with itself")
        if self.unit is not None:
            object.__setattr__(self, "unit", np.ascontiguousarray(self.unit, dtype=np.int64))
            if self.unit.shape != (n,):
                raise ValueError("unit must be a 1-d array as long as the comparisons")

    def __len__(self) -> int:
        return len(self.winner)

    def per_system(self, n_systems: int) -> np.ndarray:
        """How many comparisons each system takes part in."""
        return np.bincount(self.winner, minlength=n_systems) + np.bincount(
            self.loser, minlength=n_systems
        )

    def components(self, n_systems: int) -> np.ndarray:
        """int64[n]: the piece of the comparison graph (systems joined where they were
        compared, whatever the outcome) each system is in, numbered from 0. A system never
        compared is a piece of its own. Systems in different pieces have no comparison,
        direct or through others, that could order them."""
        from scipy.sparse import coo_matrix  # noqa: PLC0415 - scipy loads slowly
        from scipy.sparse.csgraph import connected_components  # noqa: PLC0415 - scipy loads slowly

        graph = coo_matrix(
            (np.ones(len(self)), (self.winner, self.loser)), shape=(n_systems, n_systems)
        )
        return connected_components(graph, directed=False)[1].astype(np.int64)


def comparisons_from_hits(
    systems: np.ndarray,
    scores: np.ndarray,
    mask: np.ndarray | None = None,
    units: np.ndarray | None = None,
) -> Comparisons:
    """All k(k-1)/2 pairs of every HIT: higher score wins, equal scores draw.

    ``systems`` and ``scores`` are (H, k). A score that is NaN, or whose ``mask`` entry is
    False, is missing and its pairs are skipped; so are pairs where both positions hold the
    same system. Output order: HIT by HIT, pairs (0, 1), (0, 2), ..., (k-2, k-1) within a HIT.
    ``units`` (H), if given, is each HIT's unit (its item), carried to its comparisons.
    """
    systems = np.asarray(systems)
    scores = np.asarray(scores, dtype=np.float64)
    if systems.ndim != 2 or systems.shape != scores.shape:
        raise ValueError("systems and scores must both be (H, k) arrays")
    present = ~np.isnan(scores)
    if mask is not None:
        present &= np.asarray(mask, dtype=bool)
    first, second = np.triu_indices(systems.shape[1], k=1)
    sys_a, sys_b = systems[:, first].ravel(), systems[:, second].ravel()
    score_a, score_b = scores[:, first].ravel(), scores[:, second].ravel()
    keep = (present[:, first] & present[:, second]).ravel() & (sys_a != sys_b)
    sys_a, sys_b, score_a, score_b = sys_a[keep], sys_b[keep], score_a[keep], score_b[keep]
    b_wins = score_b > score_a
    unit = None
    if units is not None:
        unit = np.repeat(np.asarray(units, dtype=np.int64), len(first))[keep]
    return Comparisons(
        winner=np.where(b_wins, sys_b, sys_a),
        loser=np.where(b_wins, sys_a, sys_b),
        draw=score_a == score_b,
        unit=unit,
    )
