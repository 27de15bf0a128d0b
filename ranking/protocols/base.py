"""What a ranking protocol is: how it ranks a criterion's judgments and how its results read.

A protocol is one view of the same counted judgments (TrueSkill as E2E, Bradley-Terry as
Chatbot Arena, WMT's z-scores, ...). Everything that differs between views lives on its
`RankingProtocol`: the service, the results page, the CSV, the rank command, the bundle and
the datasheet ask the protocol and name none. No ORM here: a protocol ranks arrays and
describes the fields of a SystemResult, which are shared by every protocol.
"""

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from ranking.engine import Comparisons, Judgments
from ranking.engine.progress import Progress

# A system's stored line, or one ranked again from a bundle: both have SystemResult's fields.
ResultLine = Any


@dataclass(frozen=True)
class Presentation:
    """How the results page shows a protocol's table (SystemResult's fields mean different
    things per protocol; the table template says which)."""

    summary: str  # what the view is, in a sentence, under the protocol tabs
    table_template: str
    score_label: str  # of the score column beside the automatic metrics
    rank_chart_title: str
    interval_chart_title: str = ""


@dataclass(frozen=True)
class Datasheet:
    """HEDS 4.3.9 (how the judgments are aggregated) and 4.3.10 (significance)."""

    aggregation: str
    significance: str


class Ranks(Protocol):
    """The engine call of a protocol: comparisons (and the raw scores with their annotators,
    for views that use them) to a ranking object."""

    def __call__(
        self,
        comparisons: Comparisons,
        n_systems: int,
        scores: Judgments,
        repetitions: int,
        seed: int,
        progress: Progress | None,
    ) -> Any: ...


@dataclass(frozen=True)
class RankingProtocol:
    name: str  # stored on each run, in URLs (?protocol=) and in bundles
    label: str
    presentation: Presentation
    datasheet: Datasheet
    rank: Ranks
    # A system's SystemResult fields from the ranking, by its number in the input.
    result_fields: Callable[[Any, int], dict[str, Any]]
    csv_columns: tuple[str, ...]
    # A CSV line from a system's name and its stored or re-ranked line.
    csv_cells: Callable[[str, ResultLine], list]
    # The first two columns of `manage.py rank`'s table: what `cluster` and `mu` hold.
    table_headers: tuple[str, str] = ("cluster", "mu")
    # What SystemResult.mu is, in words (the metrics' correlations CSV says what they used).
    score_name: str = "mu"
    # Whether `repetitions` resample anything (WMT's view does not).
    resamples: bool = True
    # Whether each repetition goes over every comparison again (TrueSkill's runs), so that
    # its cost grows with the judgments times the repetitions: the sweep queues such views
    # after a change's others, which are then fresh sooner.
    heavy: bool = False
    resample_word: str = "runs"
    # Why a finished ranking has nothing to show ("" when it has): the service then ends
    # the run as "nothing to rank" rather than storing an empty table.
    nothing_to_rank: Callable[[Any], str] = lambda ranking: ""
    # What a reader of a finished run should know about how it was computed ("" if nothing).
    note: Callable[[Any], str] = lambda ranking: ""
    # Whether the view ranks an automatic judge's scores with the judgments (the fused
    # view): it fits only a criterion with a fused judge, and its runs store which scores.
    uses_judge: bool = False
    # The published procedure the view keeps to the letter, for reproduction (E2E 2018,
    # WebNLG 2020, WMT's, ...), "" for the platform's own. A published view claims what
    # its procedure claims, calibrated or not: its runs measure how often it orders
    # identical systems on the campaign's own design (ranking/permutation_check.py).
    published: str = ""
    # Whether it ranks only the pairwise comparisons within pages: with pages of one output
    # each (nothing compared on a page) it has nothing to rank. Views of the scores
    # themselves (WMT's, WebNLG's, the fused one) and the calibrated one rank those too.
    needs_comparisons: bool = True

    def repetitions_text(self, repetitions: int, seed: int) -> str:
        if not self.resamples:
            return "no resampling"
        return f"{repetitions} {self.resample_word}, seed {seed}"


# Where the data order nothing, no order is claimed (ranking/engine/clusters.py): the
# datasheet's wording of it, for the protocols whose rank ranges follow that rule.
NO_ORDER_WITHOUT_EVIDENCE = (
    "systems tied in a run share the span of their ranks, and systems never compared, "
    "directly or through others, leave each other's ranges open"
)


def ranks_comparisons(
    engine: Callable[[Comparisons, int, int, int, Progress | None], Any],
) -> Ranks:
    """The engine call of a view that ranks the pairwise comparisons, `repetitions` times."""

    def rank(
        comparisons: Comparisons,
        n_systems: int,
        scores: Judgments,
        repetitions: int,
        seed: int,
        progress: Progress | None,
    ) -> Any:
        return engine(comparisons, n_systems, repetitions, seed, progress)

    return rank


def ranks_scores(engine: Callable[[Judgments, int], Any]) -> Ranks:
    """The engine call of a view that ranks the raw scores once, without resampling: its
    repetitions are done as soon as it is."""

    def rank(
        comparisons: Comparisons,
        n_systems: int,
        scores: Judgments,
        repetitions: int,
        seed: int,
        progress: Progress | None,
    ) -> Any:
        ranking = engine(scores, n_systems)
        if progress is not None:
            progress(repetitions, repetitions)
        return ranking

    return rank


def raw_or_none(values: Any, index: int) -> float | None:
    """A system's mean raw score from an engine's array of them (None where the engine gave
    none, or NaN: a system without z-scores)."""
    if values is None:
        return None
    value = float(values[index])
    return None if value != value else value


def six_decimals(value: float | None) -> Decimal | None:
    """A number (not text, which the CSV guard would quote when negative), written to six
    decimals; a value the protocol does not have stays empty."""
    return None if value is None else Decimal(f"{value:.6f}")
