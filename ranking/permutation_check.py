"""How often a published procedure orders identical systems on this campaign's own design.

The campaign's judgments with the system labels permuted within units (each item's judged
systems shuffled among themselves, the same shuffle for every page of the item) are a
campaign in which no system differs: whatever order a procedure claims there is false. The
share of such permutations in which the procedure claims any order (ranking/claims.py) is
its false-claim rate on this design, measured; a calibrated view's is at most 5%.

Permutations run until `most` are done or `seconds` have passed (at least one), so that a
costly procedure (E2E's TrueSkill runs) still reports, with a wider interval.
"""

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ranking.claims import orders_anything
from ranking.engine import Comparisons, Judgments
from ranking.engine.choices import NONE, Choices


@dataclass(frozen=True)
class NullCheck:
    ordered: int  # permutations in which the procedure claimed an order
    permutations: int

    @property
    def share(self) -> float:
        return self.ordered / self.permutations if self.permutations else 0.0

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """Wilson's 95% interval of the share."""
        return wilson(self.ordered, self.permutations, z)


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def null_check(
    data: Any,
    rank_rows: Callable[[Any, int], list],
    most: int,
    seconds: float,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
) -> NullCheck:
    """`data`: a ranking input (ranking.service.RankingInput); `rank_rows(data, seed)`: the
    procedure's result rows of an input, or [] where it finds nothing to rank."""
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    ordered = done = 0
    while done < most and (done == 0 or time.perf_counter() - started < seconds):
        rows = rank_rows(permuted(data, rng), seed + done)
        ordered += orders_anything(rows)
        done += 1
        if progress is not None:
            progress(done, most)
    return NullCheck(ordered, done)


def permuted(data, rng: np.random.Generator):
    """The input with each item's systems shuffled among themselves (the systems judged in
    the item, in its comparisons, scores and choices alike)."""
    scores, comparisons = data.scores, data.comparisons
    present = item_systems(comparisons, scores)
    if present is None:
        return data
    keys, relabel = present_relabelling(present, len(data.systems), rng)

    def moved(system: np.ndarray, item: np.ndarray) -> np.ndarray:
        system = np.asarray(system, dtype=np.int64)
        out = system.copy()
        known = system >= 0
        where = np.searchsorted(keys, item[known] * len(data.systems) + system[known])
        out[known] = relabel[where]
        return out

    new_comparisons = comparisons
    if comparisons.unit is not None and len(comparisons):
        new_comparisons = Comparisons(
            moved(comparisons.winner, comparisons.unit),
            moved(comparisons.loser, comparisons.unit),
            comparisons.draw,
            unit=comparisons.unit,
        )
    new_scores = scores
    if scores.choices is not None:
        choices = scores.choices
        shown_items = np.broadcast_to(choices.item[:, None], choices.shown.shape)
        new_scores = replace(
            scores,
            choices=Choices(
                choices.judgment,
                choices.item,
                choices.annotator,
                moved(choices.shown.ravel(), shown_items.ravel()).reshape(choices.shown.shape),
                np.where(choices.best < 0, choices.best, moved(choices.best, choices.item)),
                np.where(choices.worst < 0, choices.worst, moved(choices.worst, choices.item)),
            ),
        )
    elif scores.item is not None and len(scores):
        new_scores = replace(scores, system=moved(scores.system, scores.item))
    return replace(data, comparisons=new_comparisons, scores=new_scores)


def item_systems(comparisons: Comparisons, scores: Judgments) -> np.ndarray | None:
    """(item, system) rows of every system judged in each item; None where the items are
    not known (then nothing can be permuted within them)."""
    parts = []
    if comparisons.unit is not None:
        parts += [
            np.stack([comparisons.unit, comparisons.winner.astype(np.int64)], 1),
            np.stack([comparisons.unit, comparisons.loser.astype(np.int64)], 1),
        ]
    if scores.choices is not None:
        choices = scores.choices
        items = np.broadcast_to(choices.item[:, None], choices.shown.shape).ravel()
        shown = choices.shown.ravel().astype(np.int64)
        parts.append(np.stack([items[shown != NONE], shown[shown != NONE]], 1))
    elif scores.item is not None:
        parts.append(np.stack([scores.item, scores.system.astype(np.int64)], 1))
    if not parts:
        return None
    return np.unique(np.concatenate(parts), axis=0)


def present_relabelling(
    present: np.ndarray, n_systems: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted keys item * n + system and, for each, the system it becomes: a uniform
    permutation of each item's systems."""
    item, system = present[:, 0], present[:, 1]
    shuffled = np.lexsort((rng.random(len(item)), item))  # within each item, a random order
    relabel = np.empty(len(item), dtype=np.int64)
    relabel[np.argsort(item, kind="stable")] = system[shuffled]
    return item * n_systems + system, relabel
