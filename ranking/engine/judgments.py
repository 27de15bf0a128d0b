"""What every view of a criterion ranks besides the comparisons: one row per judgment (the
raw score an annotator gave one system's output, with its HIT, item and output where known),
the choices of forms that choose, and an automatic judge's scores of the outputs."""

from dataclasses import dataclass

import numpy as np

from .choices import Choices


@dataclass(frozen=True)
class JudgeScores:
    """An automatic judge's scores of outputs: the output (any identifier, as
    Judgments.output has them), the number of its system, the score."""

    output: np.ndarray  # int64[M]
    system: np.ndarray  # int64[M]
    score: np.ndarray  # float64[M]
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "output", np.asarray(self.output, dtype=np.int64))
        object.__setattr__(self, "system", np.asarray(self.system, dtype=np.int64))
        object.__setattr__(self, "score", np.asarray(self.score, dtype=np.float64))
        if not len(self.output) == len(self.system) == len(self.score):
            raise ValueError("output, system and score must be as long as each other")


@dataclass(frozen=True)
class Judgments:
    """One row per judgment: the raw score an annotator gave one system's output."""

    system: np.ndarray  # int32[n]: system numbers
    annotator: np.ndarray  # int64[n]: any identifier of the annotator
    score: np.ndarray  # float64[n]
    # int64[n]: the HIT each judgment was given in, for views that compare within a HIT
    # (best-worst); None where the judgments were not grouped.
    hit: np.ndarray | None = None
    # int64[n]: any identifier of the item (input) each judged output is for, for views that
    # average per (item, system) first (the WebNLG z-scores); None where not known.
    item: np.ndarray | None = None
    # Pairwise or best-worst-of-k judgments, for the best-worst view; None for scores.
    choices: Choices | None = None
    # int64[n]: any identifier of the judged output, and an automatic judge's scores of the
    # outputs, for the fused view (humans and a judge by PPI++); None where not known.
    output: np.ndarray | None = None
    judge: JudgeScores | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "system", np.asarray(self.system, dtype=np.int32))
        object.__setattr__(self, "annotator", np.asarray(self.annotator, dtype=np.int64))
        object.__setattr__(self, "score", np.asarray(self.score, dtype=np.float64))
        n = len(self.system)
        if self.system.ndim != 1 or len(self.annotator) != n or len(self.score) != n:
            raise ValueError("system, annotator and score must be 1-d arrays of equal length")
        for name in ("hit", "item", "output"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64))
                if len(getattr(self, name)) != n:
                    raise ValueError(f"{name} must be a 1-d array as long as the judgments")

    def __len__(self) -> int:
        return len(self.system)

    @classmethod
    def of_choices(cls, choices: Choices) -> "Judgments":
        """Judgments that choose without scoring (pairwise, best-worst of k): the views of
        scores find nothing to rank, the best-worst view ranks the choices."""
        nothing = np.empty(0)
        return cls(nothing, nothing, nothing, choices=choices)

    @classmethod
    def from_hits(
        cls,
        systems: np.ndarray,
        scores: np.ndarray,
        annotators: np.ndarray,
        items: np.ndarray | None = None,
    ) -> "Judgments":
        """From (H, k) arrays of systems and scores (NaN where a slot is empty) and the
        annotator (and, if given, the item) of each of the H HITs."""
        present = ~np.isnan(np.asarray(scores, dtype=np.float64))

        def per_slot(per_hit: np.ndarray) -> np.ndarray:
            return np.broadcast_to(np.asarray(per_hit)[:, None], present.shape)[present]

        return cls(
            np.asarray(systems)[present],
            per_slot(annotators),
            np.asarray(scores)[present],
            per_slot(np.arange(present.shape[0])),
            None if items is None else per_slot(items),
        )
