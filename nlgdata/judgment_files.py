"""Published judgments in and out: direct assessment (DA), pairwise preference and
error-span annotation (ESA) files, read row by row and written in the same layouts.

- DA, long CSV (or TSV): `item,system,annotator,criterion,score`, optional `hit`, `seconds`;
  the score a number from 0 to 100.
- Pairwise, CSV: `item,system_a,system_b,annotator,criterion,winner`, `winner` one of `a`,
  `b`, `tie`; optional `hit`. A best-worst judgment of two outputs is the best one winning.
- ESA, JSON Lines: `{"item", "system", "annotator", "criterion", "score", "spans": [{"start",
  "end", "severity"}]}`, optional `hit`; severity `minor` or `major`, 0 <= start < end, in
  characters (Unicode code points) of the output text; `check_spans` holds the spans against
  that text, which the caller has.

Readers take the lines of a file (`datafiles.read_lines`) and yield one record per row with
its line, so memory follows a row, not the file. A bad row is refused with its file, line
and column; reading goes on to collect up to `max_errors` of them, then raises them together
(`DataFileErrors`); from the first error on, no more records are yielded. Other columns or
fields are ignored. Duplicates are not looked for: an annotator may judge an output twice.

Writers write every column (empty cells for what a record lacks) so that reading a written
file gives back equal records: scores as `repr(float)`, which reads back to the same float,
and text cells through `csvcells.guard`, which reading undoes exactly.
"""

import csv
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, TextIO, TypeVar

from .csvcells import guard, unguard
from .datafiles import DataFileError, Row, parse_json_line, read_table

MAX_ERRORS = 20
MAX_ID_CHARS = 200  # the width of the database's name and id columns
MAX_SPANS = 1000  # per judgment; far more than an output of a few sentences has errors
MIN_SCORE, MAX_SCORE = 0.0, 100.0
WINNERS = ("a", "b", "tie")
SEVERITIES = ("minor", "major")
DA_COLUMNS = ("item", "system", "annotator", "criterion", "score", "hit", "seconds")
PAIRWISE_COLUMNS = ("item", "system_a", "system_b", "annotator", "criterion", "winner", "hit")
ESA_FIELDS = ("item", "system", "annotator", "criterion", "score", "spans")

# A plain decimal number: no underscores, no "nan" or "inf", which float() would take.
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")

T = TypeVar("T")
Winner = Literal["a", "b", "tie"]
Severity = Literal["minor", "major"]


class DataFileErrors(DataFileError):
    """Several refused rows: `errors` in file order; the first gives the place."""

    def __init__(self, errors: list[DataFileError], stopped: bool):
        first = errors[0]
        super().__init__(first.file_name, first.message, first.line, first.column)
        self.errors, self.stopped = errors, stopped
        lines = [str(error) for error in errors]
        if stopped:
            lines.append(f"(stopped after {len(errors)} errors)")
        self.args = ("\n".join(lines),)


@dataclass(frozen=True)
class DaJudgment:
    line: int = field(compare=False)
    item: str
    system: str
    annotator: str
    criterion: str
    score: float
    hit: str | None = None
    seconds: float | None = None


@dataclass(frozen=True)
class PairwiseJudgment:
    line: int = field(compare=False)
    item: str
    system_a: str
    system_b: str
    annotator: str
    criterion: str
    winner: Winner
    hit: str | None = None


@dataclass(frozen=True)
class Span:
    start: int  # character offsets into the output text, end excluded
    end: int
    severity: Severity


@dataclass(frozen=True)
class EsaJudgment:
    line: int = field(compare=False)
    item: str
    system: str
    annotator: str
    criterion: str
    score: float
    spans: tuple[Span, ...] = ()
    hit: str | None = None


# Reading ------------------------------------------------------------------------------------


def read_da(
    lines: Iterable[str], file_name: str, max_errors: int = MAX_ERRORS
) -> Iterator[DaJudgment]:
    required = list(DA_COLUMNS[:5])
    rows = read_table(lines, file_name, required)
    return collect_errors(rows, lambda row: da_from_row(row, file_name), max_errors)


def da_from_row(row: Row, file_name: str) -> DaJudgment:
    cell = _cells(row, file_name)
    seconds = cell.optional("seconds")
    return DaJudgment(
        line=row.line,
        item=cell.text("item"),
        system=cell.text("system"),
        annotator=cell.text("annotator"),
        criterion=cell.text("criterion"),
        score=score_in_range(cell.number("score"), file_name, row.line, "score"),
        hit=cell.optional_text("hit"),
        seconds=None if seconds is None else cell.number("seconds", minimum=0.0),
    )


def read_pairwise(
    lines: Iterable[str], file_name: str, max_errors: int = MAX_ERRORS
) -> Iterator[PairwiseJudgment]:
    required = list(PAIRWISE_COLUMNS[:6])
    rows = read_table(lines, file_name, required)
    return collect_errors(rows, lambda row: pairwise_from_row(row, file_name), max_errors)


def pairwise_from_row(row: Row, file_name: str) -> PairwiseJudgment:
    cell = _cells(row, file_name)
    system_a, system_b = cell.text("system_a"), cell.text("system_b")
    if system_a == system_b:
        raise DataFileError(file_name, "the same system on both sides", row.line, "system_b")
    winner = cell.raw("winner").strip().lower()
    if winner not in WINNERS:
        raise DataFileError(file_name, "must be a, b or tie", row.line, "winner")
    return PairwiseJudgment(
        line=row.line,
        item=cell.text("item"),
        system_a=system_a,
        system_b=system_b,
        annotator=cell.text("annotator"),
        criterion=cell.text("criterion"),
        winner=winner,  # type: ignore[arg-type]  # one of WINNERS
        hit=cell.optional_text("hit"),
    )


def read_esa(
    lines: Iterable[str], file_name: str, max_errors: int = MAX_ERRORS
) -> Iterator[EsaJudgment]:
    return collect_errors(
        _json_rows(lines, file_name), lambda row: esa_from_row(row, file_name), max_errors
    )


def _json_rows(lines: Iterable[str], file_name: str) -> Iterator[Row]:
    """JSON Lines rows; a line that is not a JSON object is an error of its own, so the
    lines after it are still read (unlike datafiles.read_json_lines, which stops)."""
    for number, line in enumerate(lines, start=1):
        raw = line.removesuffix("\n")
        if raw.strip():
            try:
                yield Row(number, parse_json_line(raw, file_name, number))
            except DataFileError as error:
                yield Row(number, {"": error})


def esa_from_row(row: Row, file_name: str) -> EsaJudgment:
    if isinstance(row.values.get(""), DataFileError):
        raise row.values[""]
    values, line = row.values, row.line
    for name in ESA_FIELDS:
        if name not in values:
            raise DataFileError(file_name, f"missing field '{name}'", line, name)
    score = values["score"]
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise DataFileError(file_name, "must be a number", line, "score")
    hit = values.get("hit")
    return EsaJudgment(
        line=line,
        item=json_text(values["item"], file_name, line, "item", numbers=True),
        system=json_text(values["system"], file_name, line, "system"),
        annotator=json_text(values["annotator"], file_name, line, "annotator", numbers=True),
        criterion=json_text(values["criterion"], file_name, line, "criterion"),
        score=score_in_range(float(score), file_name, line, "score"),
        spans=spans_from_json(values["spans"], file_name, line),
        hit=None if hit is None else json_text(hit, file_name, line, "hit", numbers=True),
    )


def spans_from_json(value: object, file_name: str, line: int) -> tuple[Span, ...]:
    if not isinstance(value, list):
        raise DataFileError(file_name, "must be a list of spans", line, "spans")
    if len(value) > MAX_SPANS:
        raise DataFileError(file_name, f"more than {MAX_SPANS} spans", line, "spans")
    spans = []
    for index, span in enumerate(value):
        where = f"spans[{index}]"
        if not isinstance(span, dict):
            raise DataFileError(file_name, "must be an object", line, where)
        for name in ("start", "end", "severity"):
            if name not in span:
                raise DataFileError(file_name, f"missing field '{name}'", line, f"{where}.{name}")
        for name in ("start", "end"):
            offset = span[name]
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                message = "must be a whole number, 0 or more"
                raise DataFileError(file_name, message, line, f"{where}.{name}")
        if span["end"] <= span["start"]:
            raise DataFileError(file_name, "must be after start", line, f"{where}.end")
        if span["severity"] not in SEVERITIES:
            message = "must be minor or major"
            raise DataFileError(file_name, message, line, f"{where}.severity")
        spans.append(Span(span["start"], span["end"], span["severity"]))
    return tuple(spans)


def check_spans(judgment: EsaJudgment, text: str, file_name: str) -> None:
    """Refuse a span that reaches past the end of `text`, the output it marks (offsets in
    characters), naming the judgment's line and the span."""
    for index, span in enumerate(judgment.spans):
        if span.end > len(text):
            raise DataFileError(
                file_name,
                f"ends at {span.end}, past the end of the output ({len(text)} characters)",
                judgment.line,
                f"spans[{index}].end",
            )


def collect_errors(rows: Iterable[Row], parse: Callable[[Row], T], max_errors: int) -> Iterator[T]:
    """Records of the rows `parse` accepts, until the first refusal; then every refusal, up
    to `max_errors`, raised together. An error of the file's structure (a row with the
    wrong number of cells) ends the reading at once, with those found before it."""
    errors: list[DataFileError] = []
    iterator = iter(rows)
    while True:
        try:
            row = next(iterator, None)
        except DataFileError as error:
            raise DataFileErrors([*errors, error], stopped=True) from None
        if row is None:
            break
        try:
            record = parse(row)
        except DataFileError as error:
            errors.append(error)
            if len(errors) >= max_errors:
                raise DataFileErrors(errors, stopped=True) from None
            continue
        if not errors:
            yield record
    if errors:
        raise DataFileErrors(errors, stopped=False)


class _cells:
    """The cells of one CSV row, each checked with the file, line and column it came from."""

    def __init__(self, row: Row, file_name: str):
        self.values, self.line, self.file_name = row.values, row.line, file_name

    def error(self, message: str, column: str) -> DataFileError:
        return DataFileError(self.file_name, message, self.line, column)

    def raw(self, column: str) -> str:
        return self.values[column]

    def optional(self, column: str) -> str | None:
        value = self.values.get(column)
        return None if value is None or not value.strip() else value

    def text(self, column: str) -> str:
        value = unguard(self.raw(column).strip())
        if not value:
            raise self.error("empty", column)
        if len(value) > MAX_ID_CHARS:
            raise self.error(f"longer than {MAX_ID_CHARS} characters", column)
        if CONTROL.search(value):
            raise self.error("contains a line break or control character", column)
        return value

    def optional_text(self, column: str) -> str | None:
        return None if self.optional(column) is None else self.text(column)

    def number(self, column: str, minimum: float | None = None) -> float:
        text = self.raw(column).strip()
        if not NUMBER.fullmatch(text):
            raise self.error(f"{text[:20]!r} is not a number", column)
        value = float(text)
        if not math.isfinite(value):
            raise self.error(f"{text[:20]} is too large a number", column)
        if minimum is not None and value < minimum:
            raise self.error(f"must be {minimum:g} or more", column)
        return value


def score_in_range(score: float, file_name: str, line: int, column: str) -> float:
    if not MIN_SCORE <= score <= MAX_SCORE:
        message = f"{score!r} is outside {MIN_SCORE:g} to {MAX_SCORE:g}"
        raise DataFileError(file_name, message, line, column)
    return score + 0.0  # -0.0 reads as 0.0


def json_text(value: object, file_name: str, line: int, column: str, numbers: bool = False) -> str:
    """A name or id given in JSON: a string (or, for ids, a whole number), not empty, at
    most MAX_ID_CHARS characters, without line breaks."""
    if isinstance(value, int) and not isinstance(value, bool) and numbers:
        value = str(value)
    if not isinstance(value, str):
        message = "must be a string or a whole number" if numbers else "must be a string"
        raise DataFileError(file_name, message, line, column)
    value = value.strip()
    if not value:
        raise DataFileError(file_name, "empty", line, column)
    if len(value) > MAX_ID_CHARS:
        raise DataFileError(file_name, f"longer than {MAX_ID_CHARS} characters", line, column)
    if CONTROL.search(value):
        message = "contains a line break or control character"
        raise DataFileError(file_name, message, line, column)
    return value


# Writing ------------------------------------------------------------------------------------


def write_da(judgments: Iterable[DaJudgment], out: TextIO) -> int:
    """Write a DA file (every column) to `out`, opened with newline=''; returns the rows."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(DA_COLUMNS)
    rows = 0
    for j in judgments:
        texts = [j.item, j.system, j.annotator, j.criterion]
        writer.writerow([*map(guard, texts), repr(j.score), _optional(j.hit), _number(j.seconds)])
        rows += 1
    return rows


def write_pairwise(judgments: Iterable[PairwiseJudgment], out: TextIO) -> int:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PAIRWISE_COLUMNS)
    rows = 0
    for j in judgments:
        texts = [j.item, j.system_a, j.system_b, j.annotator, j.criterion]
        writer.writerow([*map(guard, texts), j.winner, _optional(j.hit)])
        rows += 1
    return rows


def write_esa(judgments: Iterable[EsaJudgment], out: TextIO) -> int:
    """JSON Lines, one judgment a line; `hit` only where the judgment has one."""
    rows = 0
    for j in judgments:
        record: dict = {
            "item": j.item,
            "system": j.system,
            "annotator": j.annotator,
            "criterion": j.criterion,
            "score": j.score,
            "spans": [{"start": s.start, "end": s.end, "severity": s.severity} for s in j.spans],
        }
        if j.hit is not None:
            record["hit"] = j.hit
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        rows += 1
    return rows


def _optional(text: str | None) -> str:
    return "" if text is None else guard(text)


def _number(value: float | None) -> str:
    return "" if value is None else repr(value)


# By form -------------------------------------------------------------------------------------

Reader = Callable[..., Iterator]
Writer = Callable[[Iterable, TextIO], int]
# `import_ratings --form` and `export_judgments --format` name these.
READERS: dict[str, Reader] = {"da": read_da, "pairwise": read_pairwise, "esa": read_esa}
WRITERS: dict[str, Writer] = {"da": write_da, "pairwise": write_pairwise, "esa": write_esa}
