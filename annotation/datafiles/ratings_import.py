"""Import of crowd ratings in the E2E CrowdFlower export format (RankME pages).

One row is one annotator's page: an MR, the k systems shown (`sys1..k`), their outputs
(`ref1..k`), the magnitudes given (`quality1..k` or `natur1..k`), coverage (`check1..k`),
the worker and the times. Items, systems, outputs, HITs, annotators, assignments and
judgments are created so the platform's own rankings and pages work on published data.
"""

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import BinaryIO

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.csvsafe import unguarded
from annotation.handout import sql
from annotation.judging import form_of
from annotation.judging.base import OnScale
from annotation.models import (
    NATURALNESS,
    QUALITY,
    Annotator,
    Assignment,
    Campaign,
    CampaignCriterion,
    DataFile,
    Hit,
    HitOutput,
    Item,
    Judgment,
    Output,
    System,
    free_system_key,
    validate_system_name,
)
from nlgdata.datafiles import DataFileError, Row, batches, read_table
from nlgdata.judgments import COVERAGE_MARKS, E2E_COVERAGE_WORDS, MAX_SCORE_DIGITS, coverage_allowed
from nlgdata.text import normalise

from .importers import (
    BATCH_CHARS,
    BATCH_ROWS,
    ImportSummary,
    key_digest,
    limit_field,
    mr_input,
    open_data_file,
    output_text,
    record_file,
)

SCORE_COLUMNS: dict[str, str] = {QUALITY: "quality", NATURALNESS: "natur"}
TIME_FORMATS = ("%m/%d/%Y %H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")


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
            file_name,
            f"{value!r}: scores must be positive, below {10**MAX_SCORE_DIGITS:,}",
            line,
            column,
        )
    return score


def parse_coverage(value: str, file_name: str, line: int, column: str) -> tuple:
    """(adds, misses, perfect) from a `check` cell: empty, or words joined by commas or lines."""
    words = {part.strip() for part in re.split(r"[\n,]", value) if part.strip()}
    unknown = words - E2E_COVERAGE_WORDS.keys()
    marks = {E2E_COVERAGE_WORDS[word] for word in words - unknown}
    if unknown or not coverage_allowed(marks):
        raise DataFileError(
            file_name, f"{value!r}: expected ok, added, missing or added+missing", line, column
        )
    return tuple(mark in marks for mark in COVERAGE_MARKS)


def read_page(row: Row, criterion: str, k: int, file_name: str) -> Page:
    # A file this platform exported has its text cells guarded against spreadsheets
    # (csvsafe): an output or system name is read back as it was.
    values = {name: unguarded(value) for name, value in row.values.items()}
    line = row.line
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


# System.name's length: checked here, so that a longer one is an error naming its line rather
# than a database error (PostgreSQL refuses it; SQLite would keep it).
SYSTEM_NAME_CHARS = System._meta.get_field("name").max_length or 100


def read_position(page: Page, values: dict, position: int, prefix: str, file_name: str) -> None:
    line = page.line
    system = values[f"sys{position}"].strip()
    try:
        validate_system_name(system)
    except ValidationError as error:
        text = f"{system!r} is not a system name: {error.messages[0]}"
        raise DataFileError(file_name, text, line, f"sys{position}") from None
    if len(system) > SYSTEM_NAME_CHARS:
        text = f"a system name of {len(system)} characters (at most {SYSTEM_NAME_CHARS})"
        raise DataFileError(file_name, text, line, f"sys{position}")
    page.systems.append(system)
    page.texts.append(
        output_text(
            values[f"ref{position}"], file_name, line, f"ref{position}", settings.MAX_OUTPUT_CHARS
        )
    )
    column = f"{prefix}{position}"
    page.scores.append(parse_score(values[column], file_name, line, column))
    check = f"check{position}"
    page.coverage.append(parse_coverage(values.get(check, ""), file_name, line, check))


def read_pages(
    lines: Iterable[str], file_name: str, criterion: str | None
) -> tuple[str, Iterator[Page]]:
    """The criterion the columns hold, and the pages, read one row at a time."""
    lines = iter(lines)
    first_line = next(lines, "")
    header = {name.strip().strip('"'): True for name in re.split(r"[,\t]", first_line.strip())}
    criterion, k = detect_layout(header, criterion, file_name)
    required = ["mr", "_worker_id", "_started_at", "_created_at"]
    required += [
        f"{c}{i}" for c in ("sys", "ref", SCORE_COLUMNS[criterion]) for i in range(1, k + 1)
    ]
    rows = read_table(itertools.chain([first_line], lines), file_name, required)
    return criterion, unique_pages(rows, criterion, k, file_name)


def unique_pages(rows: Iterable[Row], criterion: str, k: int, file_name: str) -> Iterator[Page]:
    """A worker's page of a HIT once: CrowdFlower's `_id` names one worker's judgment of a
    unit, but a file keyed like Mechanical Turk's shares a HIT id among its workers."""
    seen: dict[tuple[str, str], int] = {}
    for row in rows:
        page = read_page(row, criterion, k, file_name)
        key = (page.hit_id, page.worker)
        if page.hit_id and key in seen:
            raise DataFileError(
                file_name,
                f"repeats the row of line {seen[key]} (HIT {page.hit_id}, worker {page.worker})",
                page.line,
                "_id",
            )
        seen[key] = page.line
        yield page


def page_chars(page: Page) -> int:
    return len(page.key) + sum(map(len, page.texts))


def import_ratings(
    campaign: Campaign, file: BinaryIO, file_name: str, criterion: str | None = None, user=None
) -> ImportSummary:
    """Crowd ratings in the E2E CrowdFlower format, read from a binary file object."""
    opened = open_data_file(campaign, DataFile.Kind.RATINGS, file, file_name)
    name, pages = read_pages(opened.lines, file_name, criterion)
    with transaction.atomic():
        found, _ = campaign.criteria.get_or_create(
            name=name, defaults={"is_open": False, "shows_input": name != NATURALNESS}
        )
        # In a campaign already open to annotators with systems of its own, a system the
        # file brings would get HITs at once: it comes in switched off, and the summary says so.
        running = campaign.status == Campaign.Status.OPEN and campaign.systems.exists()
        writer = PageWriter(campaign, found, file_name, new_systems_active=not running)
        for batch in batches(pages, BATCH_ROWS, BATCH_CHARS, page_chars):
            writer.write(batch)
        if not writer.rows:
            raise DataFileError(file_name, "no rows after the header")
        campaign.criteria.filter(pk=found.pk).record_judgments_change()
        # New submitted HITs, maybe new items, systems and outputs: count the loads again.
        campaign.criteria.record_pool_change(recount=True)
        sql.analyze(Item, System, Output, Annotator, Hit, HitOutput, Assignment, Judgment)
        note = ""
        if running and writer.created["systems"]:
            note = (
                f"The {writer.created['systems']} new systems were imported switched off: the"
                " campaign is open to annotators, who would get HITs of them at once. Switch"
                " them on in Systems when you want them judged."
            )
        off_scale = off_scale_note(writer.scale, writer.off_scale)
        note = " ".join(sentence for sentence in (note, off_scale) if sentence)
        summary = ImportSummary(file_name, writer.rows, writer.created, note)
        record_file(campaign, DataFile.Kind.RATINGS, opened, summary, user=user)
    return summary


NAMED_ANNOTATORS = 10  # the summary names the annotators with the most off-scale scores


def off_scale_note(scale: OnScale, by_annotator: Counter[str]) -> str:
    """What the summary says of the scores off the criterion's scale, stored as given, and
    who gave them (most first); "" when there are none."""
    total = sum(by_annotator.values())
    if not total:
        return ""
    named = ", ".join(f"{who} ({n:,})" for who, n in by_annotator.most_common(NAMED_ANNOTATORS))
    if len(by_annotator) > NAMED_ANNOTATORS:
        named += f" and {len(by_annotator) - NAMED_ANNOTATORS:,} more"
    scores = "score" if total == 1 else "scores"
    annotators = "annotator" if len(by_annotator) == 1 else "annotators"
    return (
        f"{total:,} {scores} off the scale ({scale.wording}), stored as given, by"
        f" {annotators} {named}; the campaign's monitor lists them."
    )


class PageWriter:
    """Writes pages batch by batch, keeping what later batches need: the ids of items,
    systems, outputs (with a digest of their text) and annotators."""

    def __init__(
        self,
        campaign: Campaign,
        criterion: CampaignCriterion,
        file_name: str,
        new_systems_active: bool = True,
    ):
        self.campaign, self.criterion, self.file_name = campaign, criterion, file_name
        self.new_systems_active = new_systems_active
        mr_items = campaign.items.filter(input_kind="mr")
        self.items = dict(mr_items.values_list("input_key", "id"))
        self.taken_ids = set(campaign.items.values_list("external_id", flat=True))
        self.systems = dict(campaign.systems.values_list("name", "id"))
        self.outputs = stored_outputs(campaign)
        source = Annotator.Source.CROWDFLOWER
        annotators = campaign.annotators.filter(source=source)
        self.annotators = dict(annotators.values_list("external_id", "id"))
        self.rows = 0
        self.created = dict.fromkeys(
            ["items", "systems", "outputs", "annotators", "HITs", "judgments"], 0
        )
        # Scores off the criterion's scale (a slip such as 111,111), per worker: stored as
        # given, told in the summary.
        self.scale = form_of(criterion).scale
        self.off_scale: Counter[str] = Counter()

    def write(self, pages: list[Page]) -> None:
        check_new_hits(self.criterion, pages, self.file_name)
        self.ensure_items(pages)
        self.ensure_systems(pages)
        self.ensure_outputs(pages)
        self.ensure_annotators(pages)
        hits = Hit.objects.bulk_create(
            Hit(
                campaign=self.campaign,
                criterion=self.criterion,
                item_id=self.items[p.key],
                external_id=p.hit_id or f"{self.file_name[:150]}:{p.line}",
            )
            for p in pages
        )
        self.write_judgments(pages, hits)
        for page in pages:
            off = sum(not self.scale.holds(score) for score in page.scores)
            if off:
                self.off_scale[page.worker] += off
        self.rows += len(pages)

    def write_judgments(self, pages: list[Page], hits: list[Hit]) -> None:
        slots = HitOutput.objects.bulk_create(
            HitOutput(hit=hit, output_id=self.output_id(p, name), position=position)
            for hit, p in zip(hits, pages, strict=True)
            for position, name in enumerate(p.systems, start=1)
        )
        assignments = Assignment.objects.bulk_create(
            Assignment(
                hit=hit,
                annotator_id=self.annotators[p.worker],
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
                criterion=self.criterion,
                score=p.scores[i],
                adds_information=p.coverage[i][0],
                misses_information=p.coverage[i][1],
                reflects_perfectly=p.coverage[i][2],
            )
            for n, (assignment, p) in enumerate(zip(assignments, pages, strict=True))
            for i in range(k)
        )
        self.created["HITs"] += len(hits)
        self.created["judgments"] += len(slots)

    def output_id(self, page: Page, system: str) -> int:
        return self.outputs[(self.items[page.key], self.systems[system])][0]

    def ensure_items(self, pages: list[Page]) -> None:
        new = {}
        for page in pages:
            if page.key in self.items or page.key in new:
                continue
            external_id = page.item_external_id or next_free_id(self.taken_ids)
            if external_id in self.taken_ids:
                raise DataFileError(
                    self.file_name,
                    f"item id {external_id!r} belongs to another MR",
                    page.line,
                    "mr_id",
                )
            self.taken_ids.add(external_id)
            new[page.key] = Item(
                campaign=self.campaign,
                external_id=external_id,
                input_kind="mr",
                input_data=page.input_data,
                input_key=page.key,
            )
        for item in Item.objects.bulk_create(new.values()):
            self.items[item.input_key] = item.id
        self.created["items"] += len(new)

    def ensure_systems(self, pages: list[Page]) -> None:
        names = dict.fromkeys(n for p in pages for n in p.systems if n not in self.systems)
        taken = set(self.campaign.systems.values_list("key", flat=True))
        new = []
        for name in names:  # bulk_create does not call save(), which makes the key
            new.append(System(campaign=self.campaign, name=name, key=free_system_key(name, taken)))
            new[-1].is_active = self.new_systems_active
            taken.add(new[-1].key)
        created = System.objects.bulk_create(new)
        self.systems.update((system.name, system.id) for system in created)
        self.created["systems"] += len(created)

    def ensure_outputs(self, pages: list[Page]) -> None:
        """New outputs for pairs first seen here. A text that differs from the stored or
        earlier one for the same (item, system) is an error."""
        new: dict[tuple, Output] = {}
        for page in pages:
            for position, (name, text) in enumerate(zip(page.systems, page.texts, strict=True), 1):
                pair = (self.items[page.key], self.systems[name])
                digest = text_digest(text)
                if pair in new:
                    stored = text_digest(new[pair].text)
                elif pair in self.outputs:
                    stored = self.outputs[pair][1]
                else:
                    new[pair] = Output(item_id=pair[0], system_id=pair[1], text=text)
                    continue
                if stored != digest:
                    raise DataFileError(
                        self.file_name,
                        f"differs from the output of system '{name}' already stored for this MR",
                        page.line,
                        f"ref{position}",
                    )
        for output in Output.objects.bulk_create(new.values()):
            self.outputs[(output.item_id, output.system_id)] = (output.id, text_digest(output.text))
        self.created["outputs"] += len(new)

    def ensure_annotators(self, pages: list[Page]) -> None:
        workers = dict.fromkeys(p.worker for p in pages if p.worker not in self.annotators)
        created = Annotator.objects.bulk_create(
            Annotator(campaign=self.campaign, source=Annotator.Source.CROWDFLOWER, external_id=w)
            for w in workers
        )
        self.annotators.update((a.external_id, a.id) for a in created)
        self.created["annotators"] += len(created)


def text_digest(text: str) -> bytes:
    """Equal for texts that `normalise` makes equal; short, to keep one per output."""
    return key_digest(normalise(text))


def stored_outputs(campaign: Campaign) -> dict[tuple, tuple[int, bytes]]:
    """(item, system) -> (output id, text digest) for the campaign's outputs."""
    rows = Output.objects.filter(item__campaign=campaign)
    return {
        (item_id, system_id): (pk, text_digest(text))
        for item_id, system_id, pk, text in rows.values_list(
            "item_id", "system_id", "id", "text"
        ).iterator()
    }


def check_new_hits(criterion: CampaignCriterion, pages: list[Page], file_name: str) -> None:
    """No worker's page of a HIT already in the criterion."""
    ids = [p.hit_id for p in pages if p.hit_id]
    done = Assignment.objects.filter(hit__criterion=criterion, hit__external_id__in=ids)
    taken = set(done.values_list("hit__external_id", "annotator__external_id"))
    for page in pages:
        if (page.hit_id, page.worker) in taken:
            raise DataFileError(
                file_name,
                f"HIT {page.hit_id} of worker {page.worker} is already in the campaign",
                page.line,
                "_id",
            )


def next_free_id(taken: set[str]) -> str:
    """A number not yet an item id, for rows without `mr_id`."""
    number = len(taken) + 1
    while str(number) in taken:
        number += 1
    return str(number)
