"""Importers of published evaluation data into a campaign.

Each importer reads and checks the whole file first, then writes everything in one
transaction: a file with a bad row imports nothing, and the error names file, line, column.
"""

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from .datafiles import DataFileError, Row, decode, is_json_lines, read_json_lines, read_table
from .datafiles import unquote as unquote_field
from .inputs import InputError, check_input, input_key, parse_mr
from .models import Campaign, DataFile, Item, Output, System


@dataclass(frozen=True)
class ImportSummary:
    file_name: str
    rows: int
    created: dict

    def __str__(self) -> str:
        made = ", ".join(f"{count:,} {what}" for what, count in self.created.items())
        return f"{self.file_name}: {self.rows:,} rows read; created {made}"


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def refuse_repeat(campaign: Campaign, kind: str, data: bytes, file_name: str) -> None:
    earlier = DataFile.objects.filter(campaign=campaign, kind=kind, sha256=file_digest(data))
    if earlier.exists():
        first = earlier.first()
        raise DataFileError(
            file_name,
            f"this file was already imported into '{campaign.slug}' as '{first.name}' "
            f"on {first.imported_at:%Y-%m-%d %H:%M}; nothing was imported again",
        )


def record_file(campaign, kind, data, file_name, summary, system=None, user=None) -> None:
    DataFile.objects.create(
        campaign=campaign,
        kind=kind,
        name=file_name[:255],
        sha256=file_digest(data),
        system=system,
        rows=summary.rows,
        summary=str(summary),
        imported_by=user,
    )


def limit_text(text: str, file_name: str, line: int, column: str, limit: int) -> str:
    text = text.strip()
    if not text:
        raise DataFileError(file_name, "empty text", line, column)
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


def import_items(campaign: Campaign, data: bytes, file_name: str, user=None) -> ImportSummary:
    """E2E dataset CSV (mr, ref; one row per reference) or JSON Lines of typed inputs."""
    refuse_repeat(campaign, DataFile.Kind.ITEMS, data, file_name)
    text = decode(data, file_name, settings.IMPORT_MAX_BYTES)
    if is_json_lines(file_name, text):
        records = read_item_lines(text, file_name)
    else:
        records = read_e2e_items(text, file_name)
    if not records:
        raise DataFileError(file_name, "no items in the file")
    check_new_items(campaign, records, file_name)
    summary = ImportSummary(file_name, sum(1 for _ in records), {"items": len(records)})
    with transaction.atomic():
        Item.objects.bulk_create(
            Item(
                campaign=campaign,
                external_id=r.external_id,
                input_kind=r.kind,
                input_data=r.data,
                input_key=r.key,
                references=r.references,
            )
            for r in records
        )
        record_file(campaign, DataFile.Kind.ITEMS, data, file_name, summary, user=user)
    return summary


def read_e2e_items(text: str, file_name: str) -> list[ItemRecord]:
    by_key: dict[str, ItemRecord] = {}
    limit = settings.MAX_OUTPUT_CHARS
    for row in read_table(text, file_name, ["mr"]):
        data, key = mr_input(row.values["mr"], file_name, row.line, "mr")
        record = by_key.get(key)
        if record is None:
            record = by_key[key] = ItemRecord(row.line, str(len(by_key) + 1), "mr", data, key, [])
        reference = row.values.get("ref", "").strip()
        if reference:
            record.references.append(limit_text(reference, file_name, row.line, "ref", limit))
    return list(by_key.values())


def read_item_lines(text: str, file_name: str) -> list[ItemRecord]:
    records, seen_ids, seen_keys = [], set(), set()
    for row in read_json_lines(text, file_name):
        record = item_from_json(row, file_name)
        if record.external_id in seen_ids:
            raise DataFileError(file_name, f"id {record.external_id!r} repeats", row.line, "id")
        if record.key in seen_keys:
            raise DataFileError(file_name, "the same input as an earlier line", row.line, "input")
        seen_ids.add(record.external_id)
        seen_keys.add(record.key)
        records.append(record)
    return records


def item_from_json(row: Row, file_name: str) -> ItemRecord:
    values = row.values
    for field in ("id", "kind", "input"):
        if field not in values:
            raise DataFileError(file_name, f"missing field '{field}'", row.line, field)
    kind, data = values["kind"], values["input"]
    try:
        check_input(kind, data)
    except InputError as error:
        raise DataFileError(file_name, str(error), row.line, "input") from None
    if len(str(data)) > settings.MAX_INPUT_CHARS:
        raise DataFileError(file_name, "the input is too large", row.line, "input")
    references = values.get("references", [])
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        raise DataFileError(file_name, "must be a list of strings", row.line, "references")
    external_id = limit_field(str(values["id"]), file_name, row.line, "id")
    if not external_id:
        raise DataFileError(file_name, "empty id", row.line, "id")
    return ItemRecord(row.line, external_id, kind, data, input_key(kind, data), references)


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


def import_outputs(
    campaign: Campaign, system: System, data: bytes, file_name: str, user=None
) -> ImportSummary:
    """E2E system-output TSV/CSV (MR, output), matched to items by input; or JSON Lines
    with `item` (the item id) and `text`."""
    refuse_repeat(campaign, DataFile.Kind.OUTPUTS, data, file_name)
    text = decode(data, file_name, settings.IMPORT_MAX_BYTES)
    if is_json_lines(file_name, text):
        pairs = read_output_lines(campaign, text, file_name)
    else:
        pairs = read_e2e_outputs(campaign, text, file_name)
    if not pairs:
        raise DataFileError(file_name, "no outputs in the file")
    check_new_outputs(system, pairs, file_name)
    summary = ImportSummary(file_name, len(pairs), {"outputs": len(pairs)})
    with transaction.atomic():
        Output.objects.bulk_create(
            Output(item_id=item_id, system=system, text=text, origin=Output.Origin.IMPORTED)
            for _, item_id, text in pairs
        )
        record_file(campaign, DataFile.Kind.OUTPUTS, data, file_name, summary, system, user)
    return summary


def read_e2e_outputs(campaign: Campaign, text: str, file_name: str) -> list[tuple]:
    items = dict(campaign.items.values_list("input_key", "id"))
    pairs, seen = [], set()
    for row in read_table(text, file_name, ["MR", "output"]):
        _, key = mr_input(row.values["MR"], file_name, row.line, "MR")
        if key not in items:
            raise DataFileError(file_name, "no item of the campaign has this MR", row.line, "MR")
        if key in seen:
            raise DataFileError(file_name, "a second output for the same MR", row.line, "MR")
        seen.add(key)
        output = unquote_field(row.values["output"])
        output = limit_text(output, file_name, row.line, "output", settings.MAX_OUTPUT_CHARS)
        pairs.append((row.line, items[key], output))
    return pairs


def read_output_lines(campaign: Campaign, text: str, file_name: str) -> list[tuple]:
    items = dict(campaign.items.values_list("external_id", "id"))
    pairs, seen = [], set()
    for row in read_json_lines(text, file_name):
        for field in ("item", "text"):
            if field not in row.values:
                raise DataFileError(file_name, f"missing field '{field}'", row.line, field)
        external_id = str(row.values["item"])
        if external_id not in items:
            raise DataFileError(file_name, f"no item with id {external_id!r}", row.line, "item")
        if external_id in seen:
            raise DataFileError(file_name, "a second output for the same item", row.line, "item")
        seen.add(external_id)
        output = limit_text(
            str(row.values["text"]), file_name, row.line, "text", settings.MAX_OUTPUT_CHARS
        )
        pairs.append((row.line, items[external_id], output))
    return pairs


def check_new_outputs(system: System, pairs: list[tuple], file_name: str) -> None:
    have = set(system.outputs.values_list("item_id", flat=True))
    for line, item_id, _ in pairs:
        if item_id in have:
            raise DataFileError(
                file_name, f"system '{system.name}' already has an output for this item", line
            )
