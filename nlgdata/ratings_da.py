"""Direct-assessment ratings in the long CSV layout (issue 27): one row per score, with the
columns item, system, annotator, criterion, score and optionally hit and seconds. `item` is
the id the item was imported with, `system` a system's name, `criterion` the criterion's
name in the campaign; `score` a number from 0 to 100. No Django: annotation's importer
turns these into HITs and judgments (annotation/datafiles/ratings_da.py)."""

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .datafiles import DataFileError, read_table

COLUMNS = ("item", "system", "annotator", "criterion", "score")
OPTIONAL_COLUMNS = ("hit", "seconds")
LOWEST, HIGHEST = 0.0, 100.0
MAX_FIELD = 200  # characters of an id or a name


@dataclass(frozen=True)
class DaRating:
    line: int
    item: str
    system: str
    annotator: str
    criterion: str
    score: float
    hit: str = ""
    seconds: float | None = None


def read_da_ratings(lines: Iterable[str], file_name: str) -> Iterator[DaRating]:
    """The ratings of a long CSV (or TSV), checked; DataFileError names the line and column
    of the first problem."""
    for row in read_table(lines, file_name, list(COLUMNS)):
        values = {key: (value or "").strip() for key, value in row.values.items()}
        for column in (*COLUMNS[:4], "hit"):
            if len(values.get(column, "")) > MAX_FIELD:
                raise DataFileError(
                    file_name, f"longer than {MAX_FIELD} characters", row.line, column
                )
        for column in COLUMNS[:4]:
            if not values[column]:
                raise DataFileError(file_name, "empty", row.line, column)
        yield DaRating(
            line=row.line,
            item=values["item"],
            system=values["system"],
            annotator=values["annotator"],
            criterion=values["criterion"],
            score=number(values["score"], file_name, row.line, "score", HIGHEST),
            hit=values.get("hit", ""),
            seconds=number(values["seconds"], file_name, row.line, "seconds")
            if values.get("seconds")
            else None,
        )


def number(text: str, file_name: str, line: int, column: str, highest: float = math.inf) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DataFileError(file_name, f"not a number: {text[:20]!r}", line, column) from None
    if not (LOWEST <= value <= highest):
        limits = f"from 0 to {highest:g}" if highest != math.inf else "0 or more"
        raise DataFileError(file_name, f"{text[:20]} is not {limits}", line, column)
    return value
