"""A campaign's bundle: one zip with everything its rankings were computed from and what
they gave, so that anyone can rank again without the database (ranking/bundle/rerank.py).

Members of format version 1, each listed with its row count and meaning in the manifest:

- `manifest.json`: the format and its version, the campaign, when, what wrote it
- `campaign.json`: the campaign's settings and criteria, with the exact question wording
- `items.jsonl`: `{"id", "kind", "input", "references"}`, the JSON Lines that import_items reads
- `systems.jsonl`, `outputs.jsonl`: the systems, and each output with its origin
- `annotators.jsonl`: each annotator as the number of their row (never their platform id
  or name, as in export_judgments), source, exclusion
- `judgments.jsonl`: every judgment of a submitted HIT, flagged and excluded ones too, with
  `counted` saying whether rankings use it; in ranking order (in_ranking_order)
- `runs.json`: the newest finished run per criterion and protocol: protocol, repetitions,
  seed, the judgments version it covered, its results
- `datasheet.json`: the HEDS datasheet, where the caller gives one
- `SHA256SUMS`: the SHA-256 of every other member, as `sha256sum` writes them

Members are written as streams, row by row, so memory does not grow with the campaign.
"""

import hashlib
import json
import os
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from importlib import metadata
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.db.models import BooleanField, ExpressionWrapper
from django.utils import timezone

from annotation.models import Assignment, Campaign, Judgment, Output, counted_q
from ranking.models import RankingRun, SystemResult
from ranking.protocols import REGISTERED
from ranking.service import ResultRow

FORMAT = "nlg-eval-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CAMPAIGN = "campaign.json"
ITEMS = "items.jsonl"
SYSTEMS = "systems.jsonl"
OUTPUTS = "outputs.jsonl"
ANNOTATORS = "annotators.jsonl"
JUDGMENTS = "judgments.jsonl"
RUNS = "runs.json"
DATASHEET = "datasheet.json"
CHECKSUMS = "SHA256SUMS"
PACKAGE = "nlg-eval-platform"

CONTENTS = {
    CAMPAIGN: "campaign settings and criteria, with the exact question wording",
    ITEMS: "items: id, input kind, input, references (import_items' JSON Lines)",
    SYSTEMS: "systems: name, label, architecture, description, active",
    OUTPUTS: "outputs: item, system, text, origin (imported or generated)",
    ANNOTATORS: "annotators: row number, source (prolific, invited, ...), excluded",
    JUDGMENTS: (
        "every judgment of a submitted HIT, flagged and excluded ones too: criterion, HIT, "
        "assignment, annotator (row number), position, item, system, score, coverage marks, "
        "flag, exclusion, seconds taken, counted (whether rankings use it)"
    ),
    RUNS: "the newest finished ranking run per criterion and protocol, with its results",
    DATASHEET: "the HEDS 3.0 datasheet of the campaign",
}
JUDGMENT_ORDER_NOTE = (
    "judgments.jsonl is in criterion order, then by HIT id, assignment id and position: "
    "the order in which rankings read judgments and number systems (by first appearance); "
    "a ranking uses the rows of its criterion whose `counted` is true, in this order"
)

JUDGMENT_FIELDS = {
    "criterion": "criterion__name",
    "hit": "assignment__hit_id",
    "assignment": "assignment_id",
    "annotator": "assignment__annotator_id",
    "position": "slot__position",
    "item": "assignment__hit__item__external_id",
    "system": "slot__output__system__name",
    "score": "score",
    "adds_information": "adds_information",
    "misses_information": "misses_information",
    "reflects_perfectly": "reflects_perfectly",
    "flag": "assignment__flag",
    "excluded": "assignment__annotator__is_excluded",
    "counted": "counted",
}
CHUNK = 2_000


class BundleWriter:
    """Writes members into an open zip, each as a stream, and keeps their SHA-256 and row
    counts for the checksums file and the manifest."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.sha256: dict[str, str] = {}
        self.rows: dict[str, int | None] = {}  # None for a JSON document

    def write_json(self, name: str, value: Any) -> None:
        self.write_lines(name, [to_json(value, indent=2)])
        self.rows[name] = None

    def write_jsonl(self, name: str, records: Iterable[dict]) -> None:
        self.write_lines(name, (to_json(record) for record in records))

    def write_lines(self, name: str, lines: Iterable[str]) -> None:
        digest = hashlib.sha256()
        count = 0
        # force_zip64: a member may pass 2 GiB, which zipfile must know before it starts.
        with self.archive.open(name, "w", force_zip64=True) as stream:
            for line in lines:
                data = (line + "\n").encode()
                digest.update(data)
                stream.write(data)
                count += 1
        self.sha256[name] = digest.hexdigest()
        self.rows[name] = count

    def write_checksums(self) -> None:
        lines = [f"{digest}  {name}\n" for name, digest in self.sha256.items()]
        self.archive.writestr(CHECKSUMS, "".join(lines))


def to_json(value: Any, indent: int | None = None) -> str:
    separators = (",", ": ") if indent else (",", ":")
    return json.dumps(
        value, ensure_ascii=False, allow_nan=False, indent=indent, separators=separators
    )


def write_bundle(
    campaign: Campaign,
    target: Path,
    datasheet_of: Callable[[Campaign], dict] | None = None,
) -> dict:
    """Write the campaign's bundle to `target` (replaced only once it is complete) and
    return its manifest. `datasheet_of` makes the datasheet member, from the same snapshot."""
    with snapshot(), temporary_beside(target) as partial:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            writer = BundleWriter(archive)
            runs = write_members(writer, campaign, datasheet_of)
            manifest = manifest_of(campaign, writer.rows, runs)
            writer.write_json(MANIFEST, manifest)
            writer.write_checksums()
        os.replace(partial, target)
    return manifest


def write_members(
    writer: BundleWriter, campaign: Campaign, datasheet_of: Callable[[Campaign], dict] | None
) -> list[dict]:
    """Write every member but the manifest and the checksums; return the runs written."""
    writer.write_json(CAMPAIGN, campaign_settings(campaign))
    writer.write_jsonl(ITEMS, item_records(campaign))
    writer.write_jsonl(SYSTEMS, system_records(campaign))
    writer.write_jsonl(OUTPUTS, output_records(campaign))
    writer.write_jsonl(ANNOTATORS, annotator_records(campaign))
    writer.write_jsonl(JUDGMENTS, judgment_records(campaign))
    runs = run_records(campaign)
    writer.write_json(RUNS, runs)
    if datasheet_of is not None:
        writer.write_json(DATASHEET, datasheet_of(campaign))
    return runs


@contextmanager
def snapshot() -> Iterator[None]:
    """Read the whole bundle from one consistent state of the database: a HIT submitted
    while the bundle is written must not appear in one member and not another. SQLite's
    read transaction is a snapshot already; PostgreSQL's default (read committed) is not.
    Inside an outer transaction (tests) the isolation level can no longer be set."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


@contextmanager
def temporary_beside(target: Path) -> Iterator[Path]:
    """A file beside the target (so the final rename stays on one file system), removed if
    anything fails before it is renamed: a half-written bundle never has the target's name."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        yield partial
    finally:
        partial.unlink(missing_ok=True)


# Members ------------------------------------------------------------------------------------


def campaign_settings(campaign: Campaign) -> dict:
    # The completion code is left out: it is what crowd workers show to be paid.
    fields = [
        "slug",
        "name",
        "description",
        "status",
        "outputs_per_hit",
        "standard_text",
        "standard_input_kind",
        "standard_input",
        "instructions",
        "max_hits_per_annotator",
        "min_seconds_per_hit",
        "assignment_timeout_minutes",
    ]
    settings = {field: getattr(campaign, field) for field in fields}
    settings["created_at"] = campaign.created_at.isoformat()
    settings["criteria"] = [
        {
            "criterion": criterion.name,
            "question": criterion.question_text,
            "shows_input": criterion.shows_input,
            # How it was judged (annotation/judging/), with the form's settings.
            "form": criterion.form,
            "settings": criterion.settings,
            "is_open": criterion.is_open,
            "judgments_version": criterion.judgments_version,
        }
        for criterion in campaign.criteria.order_by("name")
    ]
    return settings


def item_records(campaign: Campaign) -> Iterator[dict]:
    rows = campaign.items.order_by("pk").values_list(
        "external_id", "input_kind", "input_data", "references"
    )
    for external_id, kind, input_data, references in rows.iterator(chunk_size=CHUNK):
        yield {"id": external_id, "kind": kind, "input": input_data, "references": references}


def system_records(campaign: Campaign) -> Iterator[dict]:
    fields = ["name", "label", "architecture", "description", "is_active"]
    yield from campaign.systems.order_by("name").values(*fields).iterator(chunk_size=CHUNK)


def output_records(campaign: Campaign) -> Iterator[dict]:
    rows = (
        Output.objects.filter(item__campaign=campaign)
        .order_by("pk")
        .values_list("item__external_id", "system__name", "text", "origin")
    )
    for item, system, text, origin in rows.iterator(chunk_size=CHUNK):
        yield {"item": item, "system": system, "text": text, "origin": origin}


def annotator_records(campaign: Campaign) -> Iterator[dict]:
    rows = campaign.annotators.order_by("pk").values_list("pk", "source", "is_excluded")
    for pk, source, excluded in rows.iterator(chunk_size=CHUNK):
        yield {"annotator": pk, "source": source, "excluded": excluded}


def judgment_records(campaign: Campaign) -> Iterator[dict]:
    rows = (
        # Attention checks test annotators and rank nothing: the bundle leaves them out.
        Judgment.objects.of_originals()
        .filter(assignment__hit__campaign=campaign, assignment__status=Assignment.Status.SUBMITTED)
        # Whether rankings use it, by the one rule they use (annotation.models.counted_q).
        .annotate(counted=ExpressionWrapper(counted_q("assignment__"), BooleanField()))
        .in_ranking_order()
        .values_list(
            *JUDGMENT_FIELDS.values(), "assignment__started_at", "assignment__submitted_at"
        )
    )
    for *values, started_at, submitted_at in rows.iterator(chunk_size=CHUNK):
        record = dict(zip(JUDGMENT_FIELDS, values, strict=True))
        record["seconds"] = (
            round((submitted_at - started_at).total_seconds(), 3) if submitted_at else None
        )
        yield record


def run_records(campaign: Campaign) -> list[dict]:
    """The newest finished run of each criterion and protocol that has one, whatever the
    protocols are: the bundle records a protocol by name and ranks through the engine. The
    views that rank an automatic judge's scores are left out: the bundle holds the
    judgments, not the judge's scores, so it could not rank them again."""
    criteria = {criterion.pk: criterion for criterion in campaign.criteria.all()}
    done = RankingRun.objects.filter(criterion__in=list(criteria), status=RankingRun.Status.DONE)
    done = done.exclude(protocol__in=[p.name for p in REGISTERED if p.uses_judge])
    pairs = (
        done.order_by("criterion__name", "protocol")
        .values_list("criterion_id", "protocol")
        .distinct()
    )
    records = []
    for criterion_id, protocol in pairs:
        criterion = criteria[criterion_id]
        run = RankingRun.objects.for_criterion(criterion, protocol).latest_done()
        if run is not None:
            records.append(run_record(run, criterion.judgments_version))
    return records


def run_record(run: RankingRun, criterion_version: int) -> dict:
    results = run.results.select_related("system").order_by("position")
    return {
        "id": run.pk,
        "criterion": run.criterion.name,
        "protocol": run.protocol,
        "protocol_label": run.protocol_label,
        "repetitions": run.repetitions,
        "seed": run.seed,
        "judgments_version": run.judgments_version,
        # When they differ, judgments changed after the run: the bundle's judgments are newer
        # than its input, and ranking them again gives another result.
        "bundle_judgments_version": criterion_version,
        "judgments": run.judgments,
        "hits": run.hits,
        "comparisons": run.comparisons,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "note": run.note,
        "results": [result_record(result) for result in results],
    }


def result_record(result: SystemResult) -> dict:
    """A stored result, with the fields of a ResultRow: what ranking again must give back."""
    names = [field.name for field in fields(ResultRow) if field.name != "system"]
    return {"system": result.system.name, **{name: getattr(result, name) for name in names}}


def manifest_of(campaign: Campaign, rows: dict[str, int | None], runs: list[dict]) -> dict:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "written_by": {"package": PACKAGE, "version": package_version()},
        "campaign": campaign.slug,
        "created_at": timezone.now().isoformat(),
        "judgment_order": JUDGMENT_ORDER_NOTE,
        "checksums": f"{CHECKSUMS}: the SHA-256 of every other member, as sha256sum writes it",
        "members": {
            name: {"rows": count, "content": CONTENTS[name]} for name, count in rows.items()
        },
        "runs": [run_summary(run) for run in runs],
    }


def run_summary(run: dict) -> dict:
    keys = ["id", "criterion", "protocol", "repetitions", "seed"]
    return {
        **{key: run[key] for key in keys},
        # False: judgments changed after the run, so the bundle cannot reproduce it.
        "covers_bundle_judgments": run["judgments_version"] == run["bundle_judgments_version"],
    }


def package_version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"
