"""The design's independent unit: the item (input) of each judgment. Every page of an input
shares its outputs (E2E showed each output on several pages and judged each page three
times), so whole items are what a view resamples or permutes, never single comparisons or
judgments: those share outputs and would understate the spread (measured on E2E's design:
1.5-1.85 times).

Comparisons summed per (item, pair) are all a pairwise view's estimate, its sandwich and
every resample or permutation need, at the cost of the distinct cells.
"""

from dataclasses import dataclass, replace

import numpy as np

from .comparisons import Comparisons


@dataclass(frozen=True)
class UnitPairs:
    """Comparisons summed per (item, pair): the statistics the strengths, their sandwich and
    every permutation need, at the cost of the distinct (item, pair) cells, not the
    comparisons. Rows are grouped by unit; `first` < `second`."""

    unit: np.ndarray  # int64[m], numbered 0..U-1 in order
    first: np.ndarray  # int64[m]
    second: np.ndarray  # int64[m]
    count: np.ndarray  # float64[m]: comparisons of the pair in the unit
    net: np.ndarray  # float64[m]: wins of `first` minus wins of `second` there
    n_units: int

    @classmethod
    def of(cls, comparisons: Comparisons) -> "UnitPairs":
        if comparisons.unit is None:
            raise ValueError("the calibrated verdict needs the item of each comparison")
        winner = comparisons.winner.astype(np.int64)
        loser = comparisons.loser.astype(np.int64)
        first, second = np.minimum(winner, loser), np.maximum(winner, loser)
        outcome = np.where(comparisons.draw, 0.0, np.where(winner == first, 1.0, -1.0))
        _, unit = np.unique(comparisons.unit, return_inverse=True)
        top = int(max(second.max(initial=0), 0)) + 1
        key = (unit.astype(np.int64) * top + first) * top + second
        cells, cell = np.unique(key, return_inverse=True)
        cell_unit, pair = np.divmod(cells, top * top)
        return cls(
            unit=cell_unit,
            first=pair // top,
            second=pair % top,
            count=np.bincount(cell, minlength=len(cells)).astype(np.float64),
            net=np.bincount(cell, outcome, minlength=len(cells)),
            n_units=int(unit.max(initial=-1)) + 1,
        )

    @classmethod
    def of_blocks(
        cls, system: np.ndarray, value: np.ndarray, block: np.ndarray, unit: np.ndarray
    ) -> "UnitPairs":
        """The cells of judgments compared within blocks (the calibrated verdict's: each
        item, all its pages), one row per judgment: every two judgments of a block give the
        difference of their values, weighted 1 / (the block's size), so that least squares on
        the cells is least squares on the values with a constant per block (sum over i < j of
        (x_i - x_j)^2 / n = the sum of squares about the block's mean). Per block and system
        only counts and sums are needed: systems a and b with c_a, c_b judgments and sums
        S_a, S_b give count c_a c_b / n and net (c_b S_a - c_a S_b) / n."""
        system = np.asarray(system, dtype=np.int64)
        value = np.asarray(value, dtype=np.float64)
        _, block = np.unique(np.asarray(block), return_inverse=True)
        top = int(system.max(initial=0)) + 1
        cells, where = np.unique(block * top + system, return_inverse=True)
        count = np.bincount(where).astype(np.float64)
        total = np.bincount(where, value)
        cell_block, cell_system = np.divmod(cells, top)
        block_unit = np.zeros(int(block.max(initial=-1)) + 1, dtype=np.int64)
        block_unit[block] = np.asarray(unit, dtype=np.int64)
        size = np.bincount(cell_block, count)
        starts = np.searchsorted(cell_block, np.arange(len(size) + 1))
        rows: list[np.ndarray] = []
        for width in np.unique(np.diff(starts)):
            if width < 2:
                continue
            blocks = np.flatnonzero(np.diff(starts) == width)
            index = starts[blocks][:, None] + np.arange(width)[None, :]
            i, j = np.triu_indices(width, k=1)
            a, b = index[:, i], index[:, j]
            n = size[blocks][:, None]
            rows.append(
                np.stack(
                    [
                        np.broadcast_to(block_unit[blocks][:, None], a.shape).ravel(),
                        cell_system[a].ravel(),
                        cell_system[b].ravel(),
                        (count[a] * count[b] / n).ravel(),
                        ((count[b] * total[a] - count[a] * total[b]) / n).ravel(),
                    ],
                    axis=1,
                )
            )
        if not rows:
            return cls.from_rows(*(np.empty(0) for _ in range(5)))
        stacked = np.concatenate(rows)
        return cls.from_rows(*stacked.T)

    @classmethod
    def from_rows(
        cls,
        unit: np.ndarray,
        first: np.ndarray,
        second: np.ndarray,
        count: np.ndarray,
        net: np.ndarray,
    ) -> "UnitPairs":
        """Rows (unit, a, b, count, net) with a < b (as of_blocks gives them), added up per
        (unit, pair) and numbered by unit."""
        unit = np.asarray(unit).astype(np.int64)
        first, second = np.asarray(first).astype(np.int64), np.asarray(second).astype(np.int64)
        _, unit = np.unique(unit, return_inverse=True)
        top = int(second.max(initial=0)) + 1
        cells, cell = np.unique((unit * top + first) * top + second, return_inverse=True)
        cell_unit, pair = np.divmod(cells, top * top)
        return cls(
            unit=cell_unit,
            first=pair // top,
            second=pair % top,
            count=np.bincount(cell, np.asarray(count, np.float64), minlength=len(cells)),
            net=np.bincount(cell, np.asarray(net, np.float64), minlength=len(cells)),
            n_units=int(unit.max(initial=-1)) + 1,
        )

    def components(self, n_systems: int) -> np.ndarray:
        """The pieces of the graph of systems compared in some unit (Comparisons.components)."""
        return Comparisons(self.first, self.second, np.zeros(len(self.first), bool)).components(
            n_systems
        )

    def units_per_pair(self, n_systems: int) -> np.ndarray:
        """int64[P]: in how many units each pair a < b (joint.pair_indices order) was compared."""
        compared = self.count > 0
        per_pair = np.zeros((n_systems, n_systems), dtype=np.int64)
        np.add.at(per_pair, (self.first[compared], self.second[compared]), 1)
        return per_pair[np.triu_indices(n_systems, k=1)]

    def unit_starts(self) -> np.ndarray:
        return np.searchsorted(self.unit, np.arange(self.n_units + 1)).astype(np.int64)


def present_systems(
    pairs: UnitPairs, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The systems judged in each unit (CSR: present[present_starts[u]:present_starts[u+1]],
    ascending), and for each row the places of its two systems in its unit's list."""
    unit_of_side = np.concatenate([pairs.unit, pairs.unit])
    side = np.concatenate([pairs.first, pairs.second])
    top = int(side.max(initial=0)) + 1
    keys = np.unique(unit_of_side * top + side)
    key_unit, present = np.divmod(keys, top)
    present_starts = np.searchsorted(key_unit, np.arange(pairs.n_units + 1)).astype(np.int64)
    slot_first = np.searchsorted(keys, pairs.unit * top + pairs.first) - present_starts[pairs.unit]
    slot_second = (
        np.searchsorted(keys, pairs.unit * top + pairs.second) - present_starts[pairs.unit]
    )
    return present.astype(np.int64), present_starts, slot_first, slot_second


def bootstrap_weights(n_units: int, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """float64[rounds, U]: how many times each unit is drawn in each resample of U units
    with replacement."""
    return rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=rounds).astype(np.float64)


def with_units(comparisons: Comparisons) -> Comparisons:
    """The comparisons with their units; each its own where none are known (an old bundle,
    a caller with bare comparisons)."""
    if comparisons.unit is not None:
        return comparisons
    return replace(comparisons, unit=np.arange(len(comparisons)))
