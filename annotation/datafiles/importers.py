"""Importers of published evaluation data into a campaign.

Each importer checks the file's bytes in one pass (size, UTF-8, repeat of an earlier
import), then reads it row by row and writes in batches, all in one transaction: a file
with a bad row anywhere imports nothing, and the error names file, line and column. Memory
follows a batch of rows and the small keys that catch repeats, never the whole file.
"""

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from django.conf import settings
from django.db import transaction

from annotation.handout import sql
from annotation.models import Campaign, DataFile, Item, Output, System
from nlgdata.datafiles import (
    DataFileError,
    Row,
    batches,
    check_file,
    is_json_lines,
    read_json_lines,
    read_lines,
    read_table,
)
from nlgdata.datafiles import unquote as unquote_field
from nlgdata.inputs import InputError, check_input, check_kind, input_key, parse_mr

# Rows are written in batches of at most this many rows or characters of text.
BATCH_ROWS = 2000
BATCH_CHARS = 2_000_000


@dataclass(frozen=True)
class ImportSummary:
    file_name: str
    rows: int
    created: dict
    note: str = ""  # what the organiser should know beyond the counts

    def __str__(self) -> str:
        made = ", ".join(f"{count:,} {what}" for what, count in self.created.items())
        note = f". {self.note}" if self.note else ""
        return f"{self.file_name}: {self.rows:,} rows read; created {made}{note}"


@dataclass(frozen=True)
class Opened:
    """A data file that passed the byte checks, ready to be read line by line."""

    name: str
    sha256: str
    is_json_lines: bool
    lines: Iterator[str]


def open_data_file(campaign: Campaign, kind: str, file: BinaryIO, file_name: str) -> Opened:
    checked = check_file(file, file_name, settings.IMPORT_MAX_BYTES)
    refuse_repeat(campaign, kind, checked.sha256, file_name)
    json_lines = is_json_lines(file_name, checked.first_char)
    return Opened(file_name, checked.sha256, json_lines, read_lines(file, file_name))


def refuse_repeat(campaign: Campaign, kind: str, sha256: str, file_name: str) -> None:
    first = DataFile.objects.filter(campaign=campaign, kind=kind, sha256=sha256).first()
    if first is not None:
        raise DataFileError(
            file_name,
            f"this file was already imported into '{campaign.slug}' as '{first.name}' "
            f"on {first.imported_at:%Y-%m-%d %H:%M}; nothing was imported again",
        )


def record_file(campaign, kind, opened: Opened, summary, system=None, user=None) -> None:
    DataFile.objects.create(
        campaign=campaign,
        kind=kind,
        name=opened.name[:255],
        sha256=opened.sha256,
        system=system,
        rows=summary.rows,
        summary=str(summary),
        imported_by=user,
    )


def key_digest(key: str) -> bytes:
    """A short stand-in for a possibly long key in the sets that catch repeats in a file."""
    return hashlib.blake2b(key.encode(), digest_size=16).digest()


def limit_text(text: str, file_name: str, line: int, column: str, limit: int) -> str:
    if not text.strip():
        raise DataFileError(file_name, "empty text", line, column)
    return output_text(text, file_name, line, column, limit)


def output_text(text: str, file_name: str, line: int, column: str, limit: int) -> str:
    """A system's output, which may be empty: a system that produced no text for an item
    is part of what was published (WebNLG 2020's FORGE2017 on sample 533, scored 0 by
    the organisers' raters), rated and ranked like any other output."""
    text = text.strip()
    if len(text) > limit:
        raise DataFileError(
            file_name, f"{len(text):,} characters; the limit is {limit:,}", line, column
        )
    return text


def limit_field(value: str, file_name: str, line: int, column: str, limit: int = 200) -> str:
    """An identifier of at most `limit` characters (the width of its database column)."""
    value = value.strip()
    if len(value) > limit:
        raise DataFileError(file_name, f"longer than {limit} characters", line, column)
    return value


def json_id(value, file_name: str, line: int, column: str) -> str:
    """An id given in JSON: a string or a whole number, at most 200 characters."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise DataFileError(file_name, "must be a string or a whole number", line, column)
    external_id = limit_field(str(value), file_name, line, column)
    if not external_id:
        raise DataFileError(file_name, "empty id", line, column)
    return external_id


def mr_input(raw: str, file_name: str, line: int, column: str) -> tuple[dict, str]:
    if len(raw) > settings.MAX_INPUT_CHARS:
        raise DataFileError(
            file_name, f"longer than {settings.MAX_INPUT_CHARS:,} characters", line, column
        )
    try:
        data = {"attributes": parse_mr(unquote_field(raw))}
    except InputError as error:
        raise DataFileError(file_name, str(error), line, column) from None
    return data, input_key("mr", data)


# Items ------------------------------------------------------------------------------------


@dataclass
class ItemRecord:
    line: int
    external_id: str
    kind: str
    data: dict
    key: str
    references: list
    extends: bool = False  # more references for an item met earlier in the file


def import_items(campaign: Campaign, file: BinaryIO, file_name: str, user=None) -> ImportSummary:
    """E2E dataset CSV (mr, ref; one row per reference) or JSON Lines of typed inputs,
    read from a binary file object."""
    opened = open_data_file(campaign, DataFile.Kind.ITEMS, file, file_name)
    if opened.is_json_lines:
        rows = CountedRows(read_json_lines(opened.lines, file_name))
        records = read_item_lines(rows, file_name)
    else:
        rows = CountedRows(read_table(opened.lines, file_name, ["mr"]))
        records = read_e2e_items(rows, file_name)
    with transaction.atomic():
        created = ItemWriter(campaign, file_name).write(records)
        if not created:
            raise DataFileError(file_name, "no items in the file")
        summary = ImportSummary(file_name, rows.count, {"items": created})
        record_file(campaign, DataFile.Kind.ITEMS, opened, summary, user=user)
        campaign.criteria.record_pool_change()
        sql.analyze(Item)
    return summary


class CountedRows:
    """The rows of a file, counted as they pass: E2E rows of one MR make one item."""

    def __init__(self, rows: Iterable[Row]):
        self.rows, self.count = iter(rows), 0

    def __iter__(self) -> Iterator[Row]:
        return self

    def __next__(self) -> Row:
        row = next(self.rows)
        self.count += 1
        return row


def read_e2e_items(rows: Iterable[Row], file_name: str) -> Iterator[ItemRecord]:
    """One record per run of rows with the same MR; an MR met again extends its item."""
    ids: dict[bytes, str] = {}
    record = None
    for row in rows:
        data, key = mr_input(row.values["mr"], file_name, row.line, "mr")
        if record is None or key != record.key:
            if record is not None:
                yield record
            digest = key_digest(key)
            extends = digest in ids
            external_id = ids.setdefault(digest, str(len(ids) + 1))
            record = ItemRecord(row.line, external_id, "mr", data, key, [], extends)
        reference = row.values.get("ref", "").strip()
        if reference:
            limit = settings.MAX_OUTPUT_CHARS
            record.references.append(limit_text(reference, file_name, row.line, "ref", limit))
    if record is not None:
        yield record


def read_item_lines(rows: Iterable[Row], file_name: str) -> Iterator[ItemRecord]:
    seen_ids, seen_keys = set(), set()
    for row in rows:
        record = item_from_json(row, file_name)
        if record.external_id in seen_ids:
            raise DataFileError(file_name, f"id {record.external_id!r} repeats", row.line, "id")
        digest = key_digest(record.key)
        if digest in seen_keys:
            raise DataFileError(file_name, "the same input as an earlier line", row.line, "input")
        seen_ids.add(record.external_id)
        seen_keys.add(digest)
        yield record


def item_from_json(row: Row, file_name: str) -> ItemRecord:
    values = row.values
    for field in ("id", "kind", "input"):
        if field not in values:
            raise DataFileError(file_name, f"missing field '{field}'", row.line, field)
    kind, data = values["kind"], values["input"]
    try:
        check_kind(kind)
    except InputError as error:
        raise DataFileError(file_name, str(error), row.line, "kind") from None
    try:
        check_input(kind, data)
    except InputError as error:
        raise DataFileError(file_name, str(error), row.line, "input") from None
    if len(str(data)) > settings.MAX_INPUT_CHARS:
        raise DataFileError(file_name, "the input is too large", row.line, "input")
    references = values.get("references", [])
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        raise DataFileError(file_name, "must be a list of strings", row.line, "references")
    external_id = json_id(values["id"], file_name, row.line, "id")
    return ItemRecord(row.line, external_id, kind, data, input_key(kind, data), references)


class ItemWriter:
    """Items in batches, each checked against the campaign's items and then bulk-created."""

    def __init__(self, campaign: Campaign, file_name: str):
        self.campaign, self.file_name = campaign, file_name
        self.pending: dict[str, ItemRecord] = {}
        self.pending_chars = self.created = 0

    def write(self, records: Iterable[ItemRecord]) -> int:
        for record in records:
            if record.extends:
                self.extend(record)
            else:
                self.pending[record.external_id] = record
                self.pending_chars += len(record.key) + sum(map(len, record.references))
            if len(self.pending) >= BATCH_ROWS or self.pending_chars >= BATCH_CHARS:
                self.flush()
        self.flush()
        return self.created

    def extend(self, record: ItemRecord) -> None:
        earlier = self.pending.get(record.external_id)
        if earlier is not None:
            earlier.references += record.references
            self.pending_chars += sum(map(len, record.references))
            return
        # Written in an earlier batch of this file: rare in published files, so one update.
        item = self.campaign.items.get(external_id=record.external_id)
        item.references += record.references
        item.save(update_fields=["references"])

    def flush(self) -> None:
        records = list(self.pending.values())
        self.pending, self.pending_chars = {}, 0
        if not records:
            return
        check_new_items(self.campaign, records, self.file_name)
        Item.objects.bulk_create(
            Item(
                campaign=self.campaign,
                external_id=r.external_id,
                input_kind=r.kind,
                input_data=r.data,
                input_key=r.key,
                references=r.references,
            )
            for r in records
        )
        self.created += len(records)


def check_new_items(campaign: Campaign, records: list[ItemRecord], file_name: str) -> None:
    existing = campaign.items.filter(input_key__in=[r.key for r in records])
    known_keys = set(existing.values_list("input_key", flat=True))
    known_ids = set(
        campaign.items.filter(external_id__in=[r.external_id for r in records]).values_list(
            "external_id", flat=True
        )
    )
    for record in records:
        if record.key in known_keys:
            raise DataFileError(
                file_name, "this input is already an item of the campaign", record.line
            )
        if record.external_id in known_ids:
            raise DataFileError(
                file_name, f"item id {record.external_id!r} already exists", record.line, "id"
            )


# Outputs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutputRow:
    line: int
    item: str  # how the file names the item: its input key (E2E) or its id (JSON Lines)
    text: str


@dataclass(frozen=True)
class ItemLookup:
    field: str  # the Item field that `OutputRow.item` holds
    column: str

    def unknown(self, item: str) -> str:
        if self.field == "input_key":
            return "no item of the campaign has this MR"
        return f"no item with id {item!r}"


BY_MR = ItemLookup("input_key", "MR")
BY_ID = ItemLookup("external_id", "item")


def import_outputs(
    campaign: Campaign, system: System, file: BinaryIO, file_name: str, user=None
) -> ImportSummary:
    """E2E system-output TSV/CSV (MR, output), matched to items by input; or JSON Lines
    with `item` (the item id) and `text`; read from a binary file object."""
    opened = open_data_file(campaign, DataFile.Kind.OUTPUTS, file, file_name)
    if opened.is_json_lines:
        rows, lookup = read_output_lines(opened.lines, file_name), BY_ID
    else:
        rows, lookup = read_e2e_outputs(opened.lines, file_name), BY_MR
    with transaction.atomic():
        count = empty = 0
        for batch in batches(rows, BATCH_ROWS, BATCH_CHARS, output_row_chars):
            write_outputs(campaign, system, batch, lookup, file_name)
            count += len(batch)
            empty += sum(not row.text for row in batch)
        if not count:
            raise DataFileError(file_name, "no outputs in the file")
        created = {"outputs": count} | ({EMPTY: empty} if empty else {})
        summary = ImportSummary(file_name, count, created, empty_note(empty))
        record_file(campaign, DataFile.Kind.OUTPUTS, opened, summary, system, user)
        campaign.criteria.record_pool_change()
        sql.analyze(Output)
    return summary


# How an outputs import's summary counts the empty outputs among those it created.
EMPTY = "of them empty"


def empty_note(empty: int) -> str:
    """What an import's summary says of the empty outputs it stored."""
    if not empty:
        return ""
    return "An empty output is the system's own: annotators are told it produced no text"


def output_row_chars(row: OutputRow) -> int:
    return len(row.item) + len(row.text)


def read_e2e_outputs(lines: Iterable[str], file_name: str) -> Iterator[OutputRow]:
    seen = set()
    for row in read_table(lines, file_name, ["MR", "output"]):
        _, key = mr_input(row.values["MR"], file_name, row.line, "MR")
        digest = key_digest(key)
        if digest in seen:
            raise DataFileError(file_name, "a second output for the same MR", row.line, "MR")
        seen.add(digest)
        output = unquote_field(row.values["output"])
        output = output_text(output, file_name, row.line, "output", settings.MAX_OUTPUT_CHARS)
        yield OutputRow(row.line, key, output)


def read_output_lines(lines: Iterable[str], file_name: str) -> Iterator[OutputRow]:
    seen = set()
    for row in read_json_lines(lines, file_name):
        for field in ("item", "text"):
            if field not in row.values:
                raise DataFileError(file_name, f"missing field '{field}'", row.line, field)
        external_id = json_id(row.values["item"], file_name, row.line, "item")
        if external_id in seen:
            raise DataFileError(file_name, "a second output for the same item", row.line, "item")
        seen.add(external_id)
        text = row.values["text"]
        if not isinstance(text, str):
            raise DataFileError(file_name, "must be a string", row.line, "text")
        output = output_text(text, file_name, row.line, "text", settings.MAX_OUTPUT_CHARS)
        yield OutputRow(row.line, external_id, output)


def write_outputs(
    campaign: Campaign, system: System, rows: list[OutputRow], lookup: ItemLookup, file_name: str
) -> None:
    names = [row.item for row in rows]
    found = campaign.items.filter(**{f"{lookup.field}__in": names})
    items = dict(found.values_list(lookup.field, "id"))
    for row in rows:
        if row.item not in items:
            raise DataFileError(file_name, lookup.unknown(row.item), row.line, lookup.column)
    have = set(
        system.outputs.filter(item_id__in=list(items.values())).values_list("item_id", flat=True)
    )
    for row in rows:
        if items[row.item] in have:
            raise DataFileError(
                file_name, f"system '{system.name}' already has an output for this item", row.line
            )
    Output.objects.bulk_create(
        Output(item_id=items[row.item], system=system, text=row.text, origin=Output.Origin.IMPORTED)
        for row in rows
    )
