"""Bulk creation of items, systems and outputs from JSON records, through the importers.

Each record is checked by the importers' own functions (annotation/datafiles/importers.py),
with its index in the request standing where a file's line number would, and written in one
transaction: a bad record anywhere writes nothing. Sending the same records again writes
nothing new: an item is known by its id, a system by its name, an output by its item and
system; a record that names a known one with different content is an error, not an update.
"""

import hashlib
from dataclasses import dataclass
from io import BytesIO

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.datafiles.importers import (
    BY_ID,
    ItemWriter,
    OutputRow,
    json_id,
    output_text,
    read_item_lines,
    write_outputs,
)
from annotation.datafiles.ratings_import import import_ratings
from annotation.datafiles.ratings_layouts import IMPORTERS
from annotation.models import Campaign, DataFile, System, free_system_key
from nlgdata.datafiles import DataFileError, Row, find_problem, format_path

# The names that errors give the requests' collections of records.
COLLECTIONS = ("items", "systems", "outputs")


@dataclass(frozen=True)
class Written:
    created: int
    existing: int


def checked_rows(records: list[dict], source: str) -> list[Row]:
    """The records as the importers' rows, numbered from 0, once every value is one the
    database can store (the JSON Lines reader's check)."""
    rows = []
    for index, record in enumerate(records):
        problem = find_problem(record, 0)
        if problem is not None:
            path, message = problem
            raise DataFileError(source, message, index, format_path(path))
        rows.append(Row(index, record))
    return rows


def create_items(campaign: Campaign, records: list[dict]) -> Written:
    source = "items"
    items = list(read_item_lines(checked_rows(records, source), source))
    with transaction.atomic():
        known = dict(
            campaign.items.filter(external_id__in=[r.external_id for r in items]).values_list(
                "external_id", "input_key"
            )
        )
        for record in items:
            if record.external_id in known and known[record.external_id] != record.key:
                message = f"item id {record.external_id!r} already exists with another input"
                raise DataFileError(source, message, record.line, "input")
        new = [record for record in items if record.external_id not in known]
        created = ItemWriter(campaign, source).write(new)
        if created:
            campaign.criteria.record_pool_change()
    return Written(created, len(items) - created)


SYSTEM_FIELDS = ("name", "key", "label", "architecture", "description")


def create_systems(campaign: Campaign, records: list[dict]) -> Written:
    """Systems by their free display name; `key` (for addresses and file names) is made
    from the name where a record gives none, as System.save does."""
    source = "systems"
    systems, names, keys = [], set(), set()
    for row in checked_rows(records, source):
        system = System(campaign=campaign, **{f: row.values.get(f) or "" for f in SYSTEM_FIELDS})
        try:
            system.full_clean(exclude=["campaign"], validate_unique=False)
        except ValidationError as error:
            field, messages = next(iter(error.message_dict.items()))
            raise DataFileError(source, " ".join(messages), row.line, field) from None
        if system.name in names:
            raise DataFileError(source, f"system {system.name!r} repeats", row.line, "name")
        if system.key and system.key in keys:
            raise DataFileError(source, f"key {system.key!r} repeats", row.line, "key")
        names.add(system.name)
        keys.add(system.key)
        systems.append((row.line, system))
    with transaction.atomic():
        known = set(campaign.systems.filter(name__in=names).values_list("name", flat=True))
        new = [(line, system) for line, system in systems if system.name not in known]
        taken = set(campaign.systems.values_list("key", flat=True)) if new else set()
        for line, system in new:
            if system.key in taken:
                message = f"key {system.key!r} is another system's already"
                raise DataFileError(source, message, line, "key")
        taken |= {system.key for _, system in new if system.key}
        for _, system in new:
            if not system.key:
                system.key = free_system_key(system.name, taken)
                taken.add(system.key)
        System.objects.bulk_create([system for _, system in new])
        if new:
            campaign.criteria.record_pool_change()
    return Written(len(new), len(systems) - len(new))


def create_outputs(campaign: Campaign, system: System, records: list[dict]) -> Written:
    source = "outputs"
    rows: list[OutputRow] = []
    seen: set[str] = set()
    for row in checked_rows(records, source):
        for field in ("item", "text"):
            if field not in row.values:
                raise DataFileError(source, f"missing field '{field}'", row.line, field)
        item = json_id(row.values["item"], source, row.line, "item")
        if item in seen:
            raise DataFileError(source, "a second output for the same item", row.line, "item")
        seen.add(item)
        if not isinstance(row.values["text"], str):
            raise DataFileError(source, "must be a string", row.line, "text")
        text = output_text(row.values["text"], source, row.line, "text", settings.MAX_OUTPUT_CHARS)
        rows.append(OutputRow(row.line, item, text))
    with transaction.atomic():
        stored = dict(
            system.outputs.filter(item__external_id__in=seen).values_list(
                "item__external_id", "text"
            )
        )
        for output in rows:
            if output.item in stored and stored[output.item] != output.text:
                message = f"system '{system.name}' already has another output for this item"
                raise DataFileError(source, message, output.line, "text")
        new = [output for output in rows if output.item not in stored]
        if new:
            write_outputs(campaign, system, new, BY_ID, source)
            campaign.criteria.record_pool_change()
    return Written(len(new), len(rows) - len(new))


def import_ratings_body(
    campaign: Campaign, body: bytes, name: str, criterion: str | None, user, form: str | None = None
) -> tuple[str, bool]:
    """Ratings in the E2E CrowdFlower CSV that import_ratings reads, or (`form`) in the
    layout of that judgment form's importer: the import's summary, and whether these bytes
    were imported before (then nothing is imported again, and the summary is the first
    import's)."""
    sha256 = hashlib.sha256(body).hexdigest()
    kind = DataFile.Kind.RATINGS
    earlier = DataFile.objects.filter(campaign=campaign, kind=kind, sha256=sha256).first()
    if earlier is not None:
        return earlier.summary, True
    if form is not None:
        return str(IMPORTERS[form](campaign, BytesIO(body), name, user)), False
    return str(import_ratings(campaign, BytesIO(body), name, criterion, user)), False
