"""Exports of a campaign's judgments: one row per judgment for analysis (CSV, JSON Lines), or
the E2E CrowdFlower layout that `import_ratings` reads back.

An export is a generator of text over an `.iterator()` query: memory follows a chunk of
rows whatever the campaign's size, and the admin streams the file as it is written. What
can make an export impossible (an E2E file of tables) is checked before the first line, so
a download never stops half-way with an error.

Annotators appear as the number of their row (`Annotator.pk`), never as the id their crowd
platform gave them: the file can be shared without anyone's Prolific id, and the organiser,
who holds the database, can still tell who is who.
"""

import csv
import io
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from django.db.models import Count, Max, Min

from annotation.csvsafe import safe_row
from annotation.judging import REGISTERED, JudgmentForm
from annotation.judging.base import Shape
from annotation.models import Assignment, Campaign, CampaignCriterion, Judgment
from nlgdata.judgment_files import write_pairwise
from nlgdata.judgments import E2E_COVERAGE_WORDS
from nlgdata.text import normalise

from .ratings_da import da_rows
from .ratings_esa import esa_chunks
from .ratings_import import SCORE_COLUMNS
from .ratings_pairwise import PairwiseExportError, pairwise_criteria, pairwise_records

CSV_TYPE, JSONL_TYPE = "text/csv; charset=utf-8", "application/x-ndjson; charset=utf-8"
# The forms with a layout of their own (JudgmentForm.layout), by name: the format's name.
OWN_LAYOUTS: dict[str, JudgmentForm] = {f.name: f for f in REGISTERED if f.layout is not None}
# A layout's shape -> (content type, file name extension) of its download.
SHAPE_FILES = {
    Shape.SCORES: (CSV_TYPE, "csv"),
    Shape.CHOICES: (CSV_TYPE, "csv"),
    Shape.SPANS: (JSONL_TYPE, "jsonl"),
}


def own_download(form: JudgmentForm) -> tuple[str, str]:
    """The content type and file name of a form's own layout's download (`da.csv`)."""
    assert form.layout is not None
    content_type, extension = SHAPE_FILES[form.layout.shape]
    return content_type, f"{form.name}.{extension}"


FORMATS = {
    "csv": "CSV",
    "jsonl": "JSON Lines",
    "e2e": "E2E CrowdFlower CSV (import_ratings)",
    **{name: form.layout.label for name, form in OWN_LAYOUTS.items() if form.layout},
}
# Format -> (content type, file name suffix) of its download: every format of FORMATS has
# one, so the admin's export serves each format the command writes.
DOWNLOADS = {
    "csv": (CSV_TYPE, "judgments.csv"),
    "jsonl": (JSONL_TYPE, "judgments.jsonl"),
    "e2e": (CSV_TYPE, "e2e-ratings.csv"),
    **{name: own_download(form) for name, form in OWN_LAYOUTS.items()},
}
CHUNK_ROWS = 2000

# Column -> where the judgment's row holds it.
JUDGMENT_FIELDS = {
    "criterion": "criterion__name",
    "hit": "assignment__hit_id",
    "hit_external_id": "assignment__hit__external_id",
    "item": "assignment__hit__item__external_id",
    "position": "slot__position",
    "system": "slot__output__system__name",
    "output": "slot__output__text",
    "score": "score",
    "adds_information": "adds_information",
    "misses_information": "misses_information",
    "reflects_perfectly": "reflects_perfectly",
    "annotator": "assignment__annotator_id",
    "assignment": "assignment_id",
    "started_at": "assignment__started_at",
    "submitted_at": "assignment__submitted_at",
    "flag": "assignment__flag",
    "excluded": "assignment__annotator__is_excluded",
    "degraded_text": "slot__degraded_text",
    "composition": "assignment__hit__composition",
}
COLUMNS = [
    # The degraded text of an attention check is written as its "output".
    *(field for field in JUDGMENT_FIELDS if field not in ("degraded_text", "composition")),
    "seconds",
    "counted",
    "composed_by",
    "attention_check",
]


class ExportError(ValueError):
    pass


def export(campaign: Campaign, file_format: str, criterion: CampaignCriterion | None = None):
    """The chunks of text of the export. Raises ExportError now, before the first chunk,
    when the campaign's judgments cannot be written in this format."""
    if file_format == "e2e":
        if criterion is None:
            raise ExportError("the E2E format holds one criterion: name it")
        if criterion.name not in SCORE_COLUMNS:
            known = " or ".join(SCORE_COLUMNS)
            raise ExportError(f"the E2E format holds {known} scores, not {criterion.name}")
        k = e2e_width(criterion)
        return e2e_chunks(criterion, k)
    if file_format in OWN_LAYOUTS:
        form = OWN_LAYOUTS[file_format]
        assert form.layout is not None
        return WRITERS[form.layout.shape](campaign, criterion, form.name)
    records = judgment_records(campaign, criterion)
    if file_format == "jsonl":
        return jsonl_chunks(records)
    if file_format == "csv":
        return csv_chunks(records)
    raise ExportError(f"unknown format {file_format!r}; one of {', '.join(FORMATS)}")


def score_chunks(
    campaign: Campaign, criterion: CampaignCriterion | None, form: str
) -> Iterator[str]:
    """The long CSV of scores (ratings_da.py) of the campaign's criteria judged with `form`."""
    line = LineWriter()
    return (
        line.write(csv_cell(value) for value in row) for row in da_rows(campaign, criterion, form)
    )


def choice_chunks(
    campaign: Campaign, criterion: CampaignCriterion | None, form: str
) -> Iterator[str]:
    """The pairwise CSV; ExportError now, before any line, for criteria it cannot hold."""
    try:
        criteria = pairwise_criteria(campaign, criterion, form)
    except PairwiseExportError as error:
        raise ExportError(str(error)) from None
    return pairwise_chunks(criteria)


def pairwise_chunks(criteria: list[CampaignCriterion]) -> Iterator[str]:
    """The pairwise layout (nlgdata.judgment_files.write_pairwise), a chunk of rows at a
    time: each chunk written on its own, its header kept for the first only."""
    records = pairwise_records(criteria)
    first = True
    while True:
        batch = list(itertools.islice(records, CHUNK_ROWS))
        if not batch and not first:
            return
        buffer = io.StringIO(newline="")
        write_pairwise(batch, buffer)
        text = buffer.getvalue()
        yield text if first else text.split("\n", 1)[1]
        first = False
        if not batch:
            return


# A layout's shape -> its writer: (campaign, criterion or None, form name) -> chunks of text.
WRITERS: dict[Shape, Callable[[Campaign, CampaignCriterion | None, str], Iterator[str]]] = {
    Shape.SCORES: score_chunks,
    Shape.CHOICES: choice_chunks,
    Shape.SPANS: esa_chunks,
}


# One row per judgment -----------------------------------------------------------------------


def judgment_records(
    campaign: Campaign, criterion: CampaignCriterion | None = None
) -> Iterator[dict[str, Any]]:
    """Every judgment of a submitted HIT, counted or not, HIT by HIT in slot order."""
    judgments = Judgment.objects.filter(
        assignment__hit__campaign=campaign, assignment__status=Assignment.Status.SUBMITTED
    )
    if criterion is not None:
        judgments = judgments.for_criterion(criterion)
    rows = judgments.in_ranking_order().values_list(*JUDGMENT_FIELDS.values())
    for values in rows.iterator(chunk_size=CHUNK_ROWS):
        yield with_derived(dict(zip(JUDGMENT_FIELDS, values, strict=True)))


def with_derived(record: dict[str, Any]) -> dict[str, Any]:
    started, submitted = record["started_at"], record["submitted_at"]
    record["seconds"] = round((submitted - started).total_seconds(), 3) if submitted else None
    # An attention check's row: the degraded copy of the system's output that was shown.
    degraded = record.pop("degraded_text")
    record["attention_check"] = bool(degraded)
    if degraded:
        record["output"] = degraded
    # What rankings use (JudgmentQuerySet.counted): every exported HIT is submitted.
    record["counted"] = not record["flag"] and not record["excluded"] and not degraded
    # The policy that chose the HIT's systems; HITs of an imported ratings file have an
    # external id, and those handed out before HITs recorded it were balanced.
    composition = record.pop("composition")
    record["composed_by"] = composition or ("imported" if record["hit_external_id"] else "balanced")
    return record


def csv_chunks(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    line = LineWriter()
    yield line.write(COLUMNS)
    for record in records:
        yield line.write(csv_cell(record[column]) for column in COLUMNS)


def csv_cell(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return iso_time(value)
    return "" if value is None else value


def jsonl_chunks(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    for record in records:
        record["started_at"] = iso_time(record["started_at"])
        record["submitted_at"] = iso_time(record["submitted_at"])
        yield json.dumps({column: record[column] for column in COLUMNS}, ensure_ascii=False) + "\n"


def iso_time(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value else None


class Echo:
    """A file whose `write` gives back what it was given: a csv writer's `writerow` then
    returns its line as text (Django's pattern for streaming CSV)."""

    def write(self, line: str) -> str:
        return line


class LineWriter:
    """One CSV line at a time, as text, with every text cell made spreadsheet-safe."""

    def __init__(self) -> None:
        self.writer = csv.writer(Echo())

    def write(self, row: Iterable[Any]) -> str:
        return self.writer.writerow(safe_row(row))


# The E2E CrowdFlower layout ---------------------------------------------------------------

# The columns of E2E's published quality.csv, in its order; those the platform does not know
# (CrowdFlower's trust, channel, the worker's IP and place, gold answers) are left empty.
E2E_TIME_FORMAT = "%m/%d/%Y %H:%M:%S"
E2E_FIELDS = {
    "hit": "assignment__hit_id",
    "hit_external_id": "assignment__hit__external_id",
    "assignment": "assignment_id",
    "item": "assignment__hit__item__external_id",
    "mr": "assignment__hit__item__input_key",
    "annotator": "assignment__annotator_id",
    "started_at": "assignment__started_at",
    "submitted_at": "assignment__submitted_at",
    "system": "slot__output__system__name",
    "output": "slot__output__text",
    "score": "score",
    "adds_information": "adds_information",
    "misses_information": "misses_information",
    "reflects_perfectly": "reflects_perfectly",
}
COVERAGE_WORDS = {mark: word for word, mark in E2E_COVERAGE_WORDS.items()}


def e2e_header(k: int, prefix: str) -> list[str]:
    n = range(1, k + 1)
    return [
        *("_unit_id", "_created_at", "_id", "_started_at", "_tainted", "_channel", "_trust"),
        "_worker_id",
        *(f"check{i}" for i in n),
        *(f"{prefix}{i}" for i in n),
        *(f"check{i}_gold" for i in n),
        *(f"dupl_ref{i}" for i in n),
        "mr",
        "mr_id",
        *(f"{prefix}{i}_gold" for i in n),
        *(f"ref{i}" for i in n),
        *(f"sys{i}" for i in n),
    ]


def e2e_judgments(criterion: CampaignCriterion):
    """The judgments rankings use, in the order the ranking loads them (HIT by HIT,
    position by position), so that a campaign imported from the export numbers its
    systems, and so ranks them, as this one does."""
    return (
        Judgment.objects.counted()
        .for_criterion(criterion)
        .order_by("assignment__hit_id", "assignment_id", "slot__position")
    )


def e2e_width(criterion: CampaignCriterion) -> int:
    """The k of the criterion's HITs; ExportError if the layout cannot hold them."""
    judgments = e2e_judgments(criterion)
    if judgments.exclude(assignment__hit__item__input_kind="mr").exists():
        raise ExportError("the E2E format holds E2E meaning representations only (kind 'mr')")
    sizes = (
        judgments.order_by()
        .values("assignment_id")
        .annotate(k=Count("id"))
        .aggregate(low=Min("k"), high=Max("k"))
    )
    if sizes["low"] != sizes["high"]:
        raise ExportError(
            f"the E2E format holds HITs of one size; these have {sizes['low']} to "
            f"{sizes['high']} outputs"
        )
    return sizes["low"] or criterion.campaign.outputs_per_hit


def e2e_chunks(criterion: CampaignCriterion, k: int) -> Iterator[str]:
    header = e2e_header(k, SCORE_COLUMNS[criterion.name])
    line = LineWriter()
    yield line.write(header)
    rows = e2e_judgments(criterion).values_list(*E2E_FIELDS.values())
    records = (
        dict(zip(E2E_FIELDS, values, strict=True))
        for values in rows.iterator(chunk_size=CHUNK_ROWS)
    )
    coverage = criterion.shows_input
    for _, slots in itertools.groupby(records, key=lambda record: record["assignment"]):
        page = e2e_page(list(slots), SCORE_COLUMNS[criterion.name], coverage)
        yield line.write(page.get(column, "") for column in header)


def e2e_page(slots: list[dict[str, Any]], prefix: str, coverage: bool) -> dict[str, Any]:
    """One CrowdFlower row: a HIT's judgments, by position."""
    first = slots[0]
    # The importer needs a time; a HIT written without one (by a bulk tool) took none.
    submitted = first["submitted_at"] or first["started_at"]
    page = {
        "_created_at": e2e_time(submitted),
        "_id": first["hit_external_id"] or f"hit-{first['hit']}",
        "_started_at": e2e_time(first["started_at"]),
        "_worker_id": first["annotator"],
        "mr": first["mr"],
        "mr_id": first["item"],
    }
    duplicates = duplicate_positions([slot["output"] for slot in slots])
    for i, slot in enumerate(slots, start=1):
        page[f"sys{i}"] = slot["system"]
        page[f"ref{i}"] = slot["output"]
        page[f"{prefix}{i}"] = e2e_number(slot["score"])
        page[f"check{i}"] = coverage_cell(slot) if coverage else ""
        page[f"dupl_ref{i}"] = duplicates[i - 1]
    return page


def e2e_time(value: datetime) -> str:
    return value.astimezone(UTC).strftime(E2E_TIME_FORMAT)


def e2e_number(score: float) -> str:
    return str(int(score)) if score.is_integer() else repr(score)


def coverage_cell(slot: dict[str, Any]) -> str:
    marks = [
        mark
        for mark, ticked in (
            ("adds", slot["adds_information"]),
            ("misses", slot["misses_information"]),
            ("perfect", slot["reflects_perfectly"]),
        )
        if ticked
    ]
    return "\n".join(COVERAGE_WORDS[mark] for mark in marks)


def duplicate_positions(texts: list[str]) -> list[str]:
    """E2E's `dupl_ref` cells: for each output, the positions of the others with the same
    text, digits run together as the published file writes them ("35.0": 3 and 5)."""
    same = [normalise(text) for text in texts]
    cells = []
    for i, text in enumerate(same):
        others = "".join(str(j + 1) for j, other in enumerate(same) if j != i and other == text)
        cells.append(f"{others}.0" if others else "")
    return cells
