"""Import of crowd ratings in the E2E CrowdFlower export format (RankME pages).

One row is one annotator's page: an MR, the k systems shown (`sys1..k`), their outputs
(`ref1..k`), the magnitudes given (`quality1..k` or `natur1..k`), coverage (`check1..k`),
the worker and the times. Items, systems, outputs, HITs, annotators, assignments and
judgments are created so the platform's own rankings and pages work on published data.
"""

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.db import transaction

from .datafiles import DataFileError, Row, decode, read_table
from .importers import (
    ImportSummary,
    limit_field,
    limit_text,
    mr_input,
    record_file,
    refuse_repeat,
)
from .models import (
    Annotator,
    Assignment,
    Campaign,
    Criterion,
    DataFile,
    Hit,
    HitOutput,
    Item,
    Judgment,
    Output,
    System,
)
from .submission import normalise

SCORE_COLUMNS = {Criterion.QUALITY: "quality", Criterion.NATURALNESS: "natur"}
COVERAGE = {
    "": (False, False, False),
    "ok": (False, False, True),
    "added": (True, False, False),
    "missing": (False, True, False),
}
TIME_FORMATS = ("%m/%d/%Y %H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")
MAX_SCORE_DIGITS = 6


@dataclass
class Page:
    """One row: an annotator's judgments of k outputs for one MR."""

    line: int
    hit_id: str
    item_external_id: str
    input_data: dict
    key: str
    worker: str
    started_at: datetime
    submitted_at: datetime
    systems: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    coverage: list[tuple] = field(default_factory=list)


def detect_layout(header_row: dict, criterion: str | None, file_name: str) -> tuple[str, int]:
    k = 0
    while f"sys{k + 1}" in header_row:
        k += 1
    if k < 2:
        raise DataFileError(file_name, "missing column(s): sys1, sys2, ...", 1)
    present = [c for c, prefix in SCORE_COLUMNS.items() if f"{prefix}1" in header_row]
    if criterion:
        if criterion not in present:
            raise DataFileError(
                file_name, f"missing column(s): {SCORE_COLUMNS[criterion]}1..{k}", 1
            )
        return criterion, k
    if len(present) != 1:
        raise DataFileError(
            file_name, "needs exactly one of quality1.. or natur1.. columns (or --criterion)", 1
        )
    return present[0], k


def parse_time(value: str, file_name: str, line: int, column: str) -> datetime:
    for pattern in TIME_FORMATS:
        try:
            return datetime.strptime(value.strip(), pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise DataFileError(file_name, f"{value!r} is not a date and time", line, column)


def parse_score(value: str, file_name: str, line: int, column: str) -> float:
    value = value.strip()
    try:
        score = float(value)
    except ValueError:
        raise DataFileError(file_name, f"{value!r} is not a number", line, column) from None
    if not score > 0 or score >= 10**MAX_SCORE_DIGITS:
        raise DataFileError(
            file_name, f"{value!r}: scores must be positive, below 1,000,000", line, column
        )
    return score


def parse_coverage(value: str, file_name: str, line: int, column: str) -> tuple:
    marks = sorted({part.strip() for part in re.split(r"[\n,]", value) if part.strip()})
    if marks == ["added", "missing"]:
        return True, True, False
    joined = marks[0] if marks else ""
    if len(marks) > 1 or joined not in COVERAGE:
        raise DataFileError(
            file_name, f"{value!r}: expected ok, added, missing or added+missing", line, column
        )
    return COVERAGE[joined]


def read_page(row: Row, criterion: str, k: int, file_name: str) -> Page:
    values, line = row.values, row.line
    input_data, key = mr_input(values["mr"], file_name, line, "mr")
    page = Page(
        line=line,
        hit_id=limit_field(values.get("_id") or "", file_name, line, "_id"),
        item_external_id=limit_field(values.get("mr_id") or "", file_name, line, "mr_id"),
        input_data=input_data,
        key=key,
        worker=limit_field(values["_worker_id"], file_name, line, "_worker_id"),
        started_at=parse_time(values["_started_at"], file_name, line, "_started_at"),
        submitted_at=parse_time(values["_created_at"], file_name, line, "_created_at"),
    )
    if not page.worker:
        raise DataFileError(file_name, "empty worker id", line, "_worker_id")
    prefix = SCORE_COLUMNS[criterion]
    for position in range(1, k + 1):
        read_position(page, values, position, prefix, file_name)
    if len(set(page.systems)) != k:
        raise DataFileError(file_name, "the same system twice in one row", line, "sys1..")
    return page


def read_position(page: Page, values: dict, position: int, prefix: str, file_name: str) -> None:
    line = page.line
    system = values[f"sys{position}"].strip()
    if not re.fullmatch(r"[-a-zA-Z0-9_]+", system):
        raise DataFileError(file_name, f"{system!r} is not a system name", line, f"sys{position}")
    page.systems.append(system)
    page.texts.append(
        limit_text(
            values[f"ref{position}"], file_name, line, f"ref{position}", settings.MAX_OUTPUT_CHARS
        )
    )
    column = f"{prefix}{position}"
    page.scores.append(parse_score(values[column], file_name, line, column))
    check = f"check{position}"
    page.coverage.append(parse_coverage(values.get(check, ""), file_name, line, check))


def read_pages(text: str, file_name: str, criterion: str | None) -> tuple[str, list[Page]]:
    first_line = text.split("\n", 1)[0]
    header = {name.strip().strip('"'): True for name in re.split(r"[,\t]", first_line)}
    criterion, k = detect_layout(header, criterion, file_name)
    required = ["mr", "_worker_id", "_started_at", "_created_at"]
    required += [
        f"{c}{i}" for c in ("sys", "ref", SCORE_COLUMNS[criterion]) for i in range(1, k + 1)
    ]
    pages = [
        read_page(row, criterion, k, file_name) for row in read_table(text, file_name, required)
    ]
    if not pages:
        raise DataFileError(file_name, "no rows after the header")
    seen = {}
    for page in pages:
        if page.hit_id and page.hit_id in seen:
            raise DataFileError(
                file_name, f"repeats the row of line {seen[page.hit_id]}", page.line, "_id"
            )
        seen[page.hit_id] = page.line
    return criterion, pages


def import_ratings(
    campaign: Campaign, data: bytes, file_name: str, criterion: str | None = None, user=None
) -> ImportSummary:
    refuse_repeat(campaign, DataFile.Kind.RATINGS, data, file_name)
    text = decode(data, file_name, settings.IMPORT_MAX_BYTES)
    criterion, pages = read_pages(text, file_name, criterion)
    check_new_hits(campaign, pages, file_name)
    with transaction.atomic():
        campaign.criteria.get_or_create(criterion=criterion, defaults={"is_open": False})
        created = write_pages(campaign, criterion, pages, file_name)
        campaign.criteria.filter(criterion=criterion).record_judgments_change()
        summary = ImportSummary(file_name, len(pages), created)
        record_file(campaign, DataFile.Kind.RATINGS, data, file_name, summary, user=user)
    return summary


def check_new_hits(campaign: Campaign, pages: list[Page], file_name: str) -> None:
    ids = [p.hit_id for p in pages if p.hit_id]
    taken = set(campaign.hits.filter(external_id__in=ids).values_list("external_id", flat=True))
    for page in pages:
        if page.hit_id in taken:
            raise DataFileError(
                file_name, f"HIT {page.hit_id} is already in the campaign", page.line, "_id"
            )


def write_pages(campaign: Campaign, criterion: str, pages: list[Page], file_name: str) -> dict:
    items, new_items = ensure_items(campaign, pages, file_name)
    systems, new_systems = ensure_systems(campaign, pages)
    outputs, new_outputs = ensure_outputs(pages, items, systems, file_name)
    annotators, new_annotators = ensure_annotators(campaign, pages)
    hits = Hit.objects.bulk_create(
        Hit(
            campaign=campaign,
            criterion=criterion,
            item_id=items[p.key],
            external_id=p.hit_id or f"{file_name[:150]}:{p.line}",
        )
        for p in pages
    )
    slots = HitOutput.objects.bulk_create(
        HitOutput(hit=hit, output_id=outputs[(items[p.key], systems[name])], position=position)
        for hit, p in zip(hits, pages, strict=True)
        for position, name in enumerate(p.systems, start=1)
    )
    assignments = Assignment.objects.bulk_create(
        Assignment(
            hit=hit,
            annotator_id=annotators[p.worker],
            status=Assignment.Status.SUBMITTED,
            started_at=p.started_at,
            submitted_at=p.submitted_at,
        )
        for hit, p in zip(hits, pages, strict=True)
    )
    k = len(pages[0].systems)
    Judgment.objects.bulk_create(
        Judgment(
            assignment=assignment,
            slot=slots[n * k + i],
            score=p.scores[i],
            adds_information=p.coverage[i][0],
            misses_information=p.coverage[i][1],
            reflects_perfectly=p.coverage[i][2],
        )
        for n, (assignment, p) in enumerate(zip(assignments, pages, strict=True))
        for i in range(k)
    )
    return {
        "items": new_items,
        "systems": new_systems,
        "outputs": new_outputs,
        "annotators": new_annotators,
        "HITs": len(hits),
        "judgments": len(slots),
    }


def ensure_items(campaign: Campaign, pages: list[Page], file_name: str) -> tuple[dict, int]:
    items = dict(campaign.items.values_list("input_key", "id"))
    taken_ids = set(campaign.items.values_list("external_id", flat=True))
    new = {}
    for page in pages:
        if page.key in items or page.key in new:
            continue
        external_id = page.item_external_id or next_free_id(taken_ids)
        if external_id in taken_ids:
            raise DataFileError(
                file_name, f"item id {external_id!r} belongs to another MR", page.line, "mr_id"
            )
        taken_ids.add(external_id)
        new[page.key] = Item(
            campaign=campaign,
            external_id=external_id,
            input_kind="mr",
            input_data=page.input_data,
            input_key=page.key,
        )
    for item in Item.objects.bulk_create(new.values()):
        items[item.input_key] = item.id
    return items, len(new)


def next_free_id(taken: set[str]) -> str:
    """A number not yet an item id, for rows without `mr_id`."""
    number = len(taken) + 1
    while str(number) in taken:
        number += 1
    return str(number)


def ensure_systems(campaign: Campaign, pages: list[Page]) -> tuple[dict, int]:
    systems = dict(campaign.systems.values_list("name", "id"))
    names = dict.fromkeys(name for page in pages for name in page.systems if name not in systems)
    created = System.objects.bulk_create(System(campaign=campaign, name=name) for name in names)
    systems.update((system.name, system.id) for system in created)
    return systems, len(created)


def ensure_outputs(pages, items: dict, systems: dict, file_name: str) -> tuple[dict, int]:
    """Outputs by (item, system): those stored, and new ones for pairs first seen here. A
    text that differs from the stored or earlier one for the same pair is an error."""
    existing = Output.objects.filter(item_id__in=set(items.values()))
    texts = {(o.item_id, o.system_id): o.text for o in existing}
    new: list[Output] = []
    for page in pages:
        for position, (name, text) in enumerate(zip(page.systems, page.texts, strict=True), 1):
            pair = (items[page.key], systems[name])
            if pair not in texts:
                texts[pair] = text
                new.append(Output(item_id=pair[0], system_id=pair[1], text=text))
            elif normalise(texts[pair]) != normalise(text):
                raise DataFileError(
                    file_name,
                    f"differs from the output of system '{name}' already stored for this MR",
                    page.line,
                    f"ref{position}",
                )
    Output.objects.bulk_create(new)
    ids = Output.objects.filter(item_id__in=set(items.values())).values_list(
        "item_id", "system_id", "id"
    )
    return {(item_id, system_id): pk for item_id, system_id, pk in ids}, len(new)


def ensure_annotators(campaign: Campaign, pages: list[Page]) -> tuple[dict, int]:
    source = Annotator.Source.CROWDFLOWER
    known = dict(campaign.annotators.filter(source=source).values_list("external_id", "id"))
    workers = dict.fromkeys(p.worker for p in pages if p.worker not in known)
    created = Annotator.objects.bulk_create(
        Annotator(campaign=campaign, source=source, external_id=w) for w in workers
    )
    known.update((a.external_id, a.id) for a in created)
    return known, len(created)
