"""Judgments that choose rather than score: pairwise preferences (A better, B better, tie) and
best-worst of k (the best and the worst of k outputs shown together), and the pairwise
comparisons they imply for TrueSkill and Bradley-Terry."""

from dataclasses import dataclass

import numpy as np

from .comparisons import Comparisons

NONE = -1  # no system: an empty slot of `shown`, or no best and no worst (a tie)


@dataclass(frozen=True)
class Choices:
    """One row per judgment: the systems shown together and the one chosen best and the
    one chosen worst. A pairwise preference is k = 2 (the winner best, the other worst); a
    tie, or a judgment that all shown are alike, chooses neither (NONE for both)."""

    judgment: np.ndarray  # int64[J]: any identifier of the judgment
    item: np.ndarray  # int64[J]: the item (input) whose outputs were shown
    annotator: np.ndarray  # int64[J]
    shown: np.ndarray  # int32[J, k]: system numbers, NONE in slots a judgment did not use
    best: np.ndarray  # int32[J]: a system of the row's shown, or NONE
    worst: np.ndarray  # int32[J]

    def __post_init__(self) -> None:
        for name in ("judgment", "item", "annotator"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        for name in ("best", "worst"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int32))
        object.__setattr__(self, "shown", np.atleast_2d(np.asarray(self.shown, dtype=np.int32)))
        n = len(self.judgment)
        if self.shown.ndim != 2 or self.shown.shape[0] != n:
            raise ValueError("shown must be a (J, k) array, a row per judgment")
        if any(len(getattr(self, f)) != n for f in ("item", "annotator", "best", "worst")):
            raise ValueError("judgment, item, annotator, best and worst must be as long as shown")

    def __len__(self) -> int:
        return len(self.judgment)

    @classmethod
    def from_pairwise(
        cls,
        judgment: np.ndarray,
        item: np.ndarray,
        annotator: np.ndarray,
        system_a: np.ndarray,
        system_b: np.ndarray,
        winner: np.ndarray,
    ) -> "Choices":
        """From pairwise preferences, `winner` "a", "b" or "tie" for each."""
        a, b = np.asarray(system_a), np.asarray(system_b)
        winner = np.asarray(winner)
        if not np.isin(winner, ["a", "b", "tie"]).all():
            raise ValueError("winner must be 'a', 'b' or 'tie'")
        best = np.where(winner == "a", a, np.where(winner == "b", b, NONE))
        worst = np.where(winner == "a", b, np.where(winner == "b", a, NONE))
        return cls(judgment, item, annotator, np.stack([a, b], axis=1), best, worst)

    def valid(self) -> np.ndarray:
        """bool[J]: at least two distinct systems shown, and either neither chosen or a best
        and a different worst, both among those shown."""
        used = self.shown != NONE
        ordered = np.sort(np.where(used, self.shown, NONE), axis=1)
        repeated = ((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] != NONE)).any(axis=1)
        neither = (self.best == NONE) & (self.worst == NONE)
        best_shown = (used & (self.shown == self.best[:, None])).any(axis=1)
        worst_shown = (used & (self.shown == self.worst[:, None])).any(axis=1)
        chosen = best_shown & worst_shown & (self.best != self.worst)
        return (used.sum(axis=1) >= 2) & ~repeated & (neither | chosen)


def comparisons_from_choices(choices: Choices) -> Comparisons:
    """The pairwise comparisons the valid judgments imply, judgment by judgment: the best
    beats every other shown, every other shown beats the worst, and nothing is said between
    the ones in the middle (no comparison, not a draw). A judgment that chooses neither (a
    pairwise tie) is a draw between every two shown. A pairwise preference is therefore one
    comparison."""
    valid = choices.valid()
    shown = np.where(valid[:, None], choices.shown, NONE)
    used = shown != NONE
    row = np.broadcast_to(np.arange(len(choices))[:, None], shown.shape)
    decided = (choices.best != NONE)[:, None]
    best = np.broadcast_to(choices.best[:, None], shown.shape)
    worst = np.broadcast_to(choices.worst[:, None], shown.shape)
    beaten_by_best = used & decided & (shown != best)
    beating_worst = used & decided & (shown != best) & (shown != worst)
    first, second = np.triu_indices(shown.shape[1], k=1)
    tied = (~decided[:, 0])[:, None] & used[:, first] & used[:, second]
    parts = [
        # (row, order within the row, winner, loser, draw)
        (row[beaten_by_best], 0, best[beaten_by_best], shown[beaten_by_best], False),
        (row[beating_worst], 1, shown[beating_worst], worst[beating_worst], False),
        (
            row[:, first][tied],
            2,
            shown[:, first][tied],
            shown[:, second][tied],
            True,
        ),
    ]
    rows = np.concatenate([p[0] for p in parts])
    kind = np.concatenate([np.full(len(p[0]), p[1]) for p in parts])
    order = np.lexsort((kind, rows))  # judgment by judgment; stable within a kind
    return Comparisons(
        winner=np.concatenate([p[2] for p in parts])[order],
        loser=np.concatenate([p[3] for p in parts])[order],
        draw=np.concatenate([np.full(len(p[0]), p[4]) for p in parts])[order],
        unit=choices.item[rows[order]],  # the item shown: the design's unit
    )
