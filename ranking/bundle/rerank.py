"""Ranking again from a bundle alone (ranking/bundle/writer.py), with no database rows.

The bundle's checksums are verified first: a member changed after the bundle was written
is refused by name. Each stored run is then ranked again from the bundle's counted
judgments through the functions the worker uses (ranking_input_from_rows, rank_input,
result_rows), with the run's protocol, repetitions and seed, and compared with what the
run stored.

A bundle comes from outside, so it is read as hostile. Before anything is inflated, the
size of the zip's directory and its number of members, then each member's declared size,
compression method and ratio, are checked against `Limits`; zipfile then inflates no
member past its declared size. Members are read as streams: a JSON document only up to
its cap, JSON Lines a line at a time up to theirs. Every value used is checked for its type
and range (repetitions within the 10 to 10,000 that runs allow everywhere), and anything
wrong is a BundleError naming the member, the line and the field.
"""

import hashlib
import json
import os
import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import IO, Any

from annotation.judging import FORMS
from ranking.models import MAX_REPETITIONS, MIN_REPETITIONS
from ranking.service import (
    RankingInput,
    ResultRow,
    choices_input_from_rows,
    rank_input,
    ranking_input_from_rows,
    result_rows,
)

from .writer import CAMPAIGN, CHECKSUMS, FORMAT, FORMAT_VERSION, JUDGMENTS, MANIFEST, RUNS


class BundleError(ValueError):
    pass


@dataclass(frozen=True)
class Limits:
    """What a bundle may hold; past any of these it is refused, all but the last two
    before anything is inflated. A real campaign's bundle is far inside them: a judgment
    takes about 260 bytes of judgments.jsonl inflated, 20 deflated."""

    members: int = 32  # a bundle has ten
    directory_bytes: int = 64 * 1024  # the zip's directory, which zipfile reads whole
    bundle_bytes: int = 2 << 30  # every member inflated; JSON Lines may be that large
    document_bytes: int = 64 << 20  # a member read whole: JSON documents, the checksums
    # Inflated over compressed size, for members over ratio_from bytes: judgments deflate
    # about 14 to 1, 100,000 identical ones 260 to 1, a zip bomb's zeros 1,000 to 1.
    ratio: int = 500
    ratio_from: int = 1 << 20
    runs: int = 100  # a run per criterion and protocol
    line_bytes: int = 1 << 20  # one line of JSON Lines
    judgments: int = 5_000_000  # lines of judgments.jsonl: the ranking holds them in memory


LIMITS = Limits()


@dataclass(frozen=True)
class Reranked:
    run: dict  # the run as the bundle stores it
    data: RankingInput[str]
    rows: list[ResultRow[str]]
    differences: list[str]  # empty when the results are identical to the stored ones


def rerank_bundle(
    path: Path,
    criterion: str | None = None,
    protocol: str | None = None,
    limits: Limits = LIMITS,
) -> list[Reranked]:
    """Rank again every stored run of the bundle (or those of one criterion or protocol)."""
    try:
        check_directory(path, limits)
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        raise BundleError(f"{path}: not a readable zip file ({error})") from None
    with archive:
        verify(archive, limits)
        runs = chosen_runs(read_json(archive, RUNS, limits), criterion, protocol, limits)
        # A bundle without the campaign's settings (written by hand) ranks the scores.
        present = CAMPAIGN in archive.namelist()
        choosing = choosing_criteria(read_json(archive, CAMPAIGN, limits)) if present else set()
        return [rerank(archive, run, limits, run["criterion"] in choosing) for run in runs]


def choosing_criteria(campaign: Any) -> set[str]:
    """The names of the bundle's criteria judged with a form that chooses (pairwise,
    best-worst): ranked from their choices, as the worker ranks them."""
    criteria = campaign.get("criteria") if isinstance(campaign, dict) else None
    if not isinstance(criteria, list):
        return set()
    return {
        c["criterion"]
        for c in criteria
        if isinstance(c, dict)
        and isinstance(c.get("criterion"), str)
        and getattr(FORMS.get(str(c.get("form"))), "chooses", False)
    }


def chosen_runs(
    runs: Any, criterion: str | None, protocol: str | None, limits: Limits = LIMITS
) -> list[dict]:
    if not isinstance(runs, list):
        raise BundleError(f"{RUNS}: not a list of runs")
    if len(runs) > limits.runs:
        raise BundleError(f"{RUNS}: {len(runs)} runs, more than the {limits.runs} a bundle may")
    for number, run in enumerate(runs, start=1):
        check_run(run, number)
    chosen = [
        run
        for run in runs
        if criterion in (None, run.get("criterion")) and protocol in (None, run.get("protocol"))
    ]
    if not chosen:
        wanted = f"criterion {criterion or 'any'}, protocol {protocol or 'any'}"
        raise BundleError(f"the bundle holds no finished run ({wanted})")
    return chosen


RUN_FIELDS: dict[str, type | tuple[type, ...]] = {
    "criterion": str,
    "protocol": str,
    "repetitions": int,
    "seed": int,
    "results": list,
}


def check_run(run: Any, number: int) -> None:
    """The fields of a stored run that ranking again uses, with their types and ranges."""
    if not isinstance(run, dict):
        raise BundleError(f"{RUNS}, run {number}: not a JSON object but {json_type(run)}")
    where = f"{RUNS}, run {number}"
    for name, kind in RUN_FIELDS.items():
        typed_field(run, name, kind, where)
    if not MIN_REPETITIONS <= run["repetitions"] <= MAX_REPETITIONS:
        raise BundleError(
            f"{where}: field 'repetitions' is {run['repetitions']:,}, not within "
            f"{MIN_REPETITIONS} to {MAX_REPETITIONS:,}"
        )
    if not 0 <= run["seed"] < 2**63:
        raise BundleError(f"{where}: field 'seed' is {run['seed']}, not within 0 to 2**63 - 1")
    for index, result in enumerate(run["results"], start=1):
        if not isinstance(result, dict):
            raise BundleError(f"{where}, result {index}: not a JSON object")
        typed_field(result, "system", str, f"{where}, result {index}")


def typed_field(record: dict, name: str, kind: type | tuple[type, ...], where: str) -> Any:
    """record[name], if it is there and of `kind` (JSON's true and false are not numbers)."""
    if name not in record:
        raise BundleError(f"{where}: no field '{name}'")
    value = record[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        expected = " or ".join(JSON_TYPES[k] for k in kinds)
        raise BundleError(f"{where}: field '{name}' is {json_type(value)}, not {expected}")
    return value


JSON_TYPES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
JSON_TYPES |= {list: "a list", dict: "an object", type(None): "null"}


def json_type(value: Any) -> str:
    return JSON_TYPES.get(type(value), type(value).__name__)


def rerank(
    archive: zipfile.ZipFile, run: dict, limits: Limits = LIMITS, chooses: bool = False
) -> Reranked:
    criterion, protocol = run["criterion"], run["protocol"]
    repetitions, seed = run["repetitions"], run["seed"]
    counted = counted_rows(archive, criterion, limits, with_item=chooses)
    data: RankingInput[str] = (
        choices_input_from_rows(counted) if chooses else ranking_input_from_rows(counted)
    )
    try:
        ranking = rank_input(data, protocol, repetitions, seed)
    except ValueError as error:  # NothingToRank, or a protocol this version does not know
        raise BundleError(f"{criterion}, {protocol}: {error}") from None
    rows = result_rows(data, ranking, protocol)
    return Reranked(run, data, rows, differences(run, data, rows))


def counted_rows(
    archive: zipfile.ZipFile, criterion: str, limits: Limits = LIMITS, with_item: bool = False
) -> Iterator[tuple]:
    """The criterion's counted judgments as (assignment, annotator, system, score), and
    their item where the record has one (required `with_item`), in the bundle's order,
    which is the order rankings read them in."""
    for line, record in read_jsonl(archive, JUDGMENTS, limits):
        where = f"{JUDGMENTS}, line {line}"
        if line > limits.judgments:
            raise BundleError(f"{where}: more than the {limits.judgments:,} judgments it may hold")
        if not isinstance(record, dict):
            raise BundleError(f"{where}: not a JSON object but {json_type(record)}")
        chosen = typed_field(record, "criterion", str, where) == criterion
        if typed_field(record, "counted", bool, where) and chosen:
            row = (
                typed_field(record, "assignment", int, where),
                typed_field(record, "annotator", int, where),
                typed_field(record, "system", str, where),
                float(typed_field(record, "score", (int, float), where)),
            )
            if with_item or "item" in record:
                yield (*row, typed_field(record, "item", str, where))
            else:
                yield row


def differences(run: dict, data: RankingInput[str], rows: list[ResultRow[str]]) -> list[str]:
    found = []
    counts = (data.judgments, data.hits, len(data.comparisons))
    stored_counts = (run.get("judgments"), run.get("hits"), run.get("comparisons"))
    if counts != stored_counts:
        found.append(
            f"input: {describe_counts(counts)} here, {describe_counts(stored_counts)} stored"
        )
    stored = {result.get("system"): result for result in run.get("results", [])}
    names = [field.name for field in fields(ResultRow)]
    for row in rows:
        theirs = stored.get(row.system)
        mine = dict(zip(names, astuple(row), strict=True))
        changed = [name for name in names if theirs is None or theirs.get(name) != mine[name]]
        if changed:
            found.append(f"{row.system}: {', '.join(changed)} differ")
    if set(stored) != {row.system for row in rows}:
        found.append("the systems ranked are not those of the stored run")
    if found and run.get("judgments_version") != run.get("bundle_judgments_version"):
        found.append(
            "the judgments changed after this run (its version "
            f"{run.get('judgments_version')}, the bundle's {run.get('bundle_judgments_version')}): "
            "rank the campaign again, then write the bundle"
        )
    return found


def describe_counts(counts: tuple) -> str:
    judgments, hits, comparisons = counts
    return f"{judgments} judgments, {hits} HITs, {comparisons} comparisons"


# Reading and verifying ---------------------------------------------------------------------

END_RECORD = struct.Struct("<4s4H2LH")  # the zip's end of central directory record
END_RECORD_64 = struct.Struct("<4sQ2H2L4Q")  # its Zip64 form, before a 20-byte locator
ZIP64_LOCATOR = 20


def check_directory(path: Path, limits: Limits = LIMITS) -> None:
    """Refuse a zip whose directory lists too many members or is too large, before zipfile
    reads it whole and makes an object per member (200,000 of them take seconds)."""
    with path.open("rb") as file:
        size = file.seek(0, os.SEEK_END)
        start = max(0, size - END_RECORD.size - 0xFFFF)  # the record, then a comment
        file.seek(start)
        tail = file.read()
        found = tail.rfind(b"PK\x05\x06")
        if found < 0 or found + END_RECORD.size > len(tail):
            return  # not a zip: zipfile says so
        *_, members, directory, _, _ = END_RECORD.unpack_from(tail, found)
        if start + found >= ZIP64_LOCATOR + END_RECORD_64.size:
            file.seek(start + found - ZIP64_LOCATOR)
            if file.read(4) == b"PK\x06\x07":  # zipfile reads the Zip64 record's numbers
                file.seek(start + found - ZIP64_LOCATOR - END_RECORD_64.size)
                record = END_RECORD_64.unpack(file.read(END_RECORD_64.size))
                members, directory = record[7], record[8]
    if members > limits.members or directory > limits.directory_bytes:
        raise BundleError(
            f"the zip lists {members:,} members in a directory of {directory:,} bytes; "
            f"a bundle has at most {limits.members} in {limits.directory_bytes:,} bytes"
        )


def check_members(archive: zipfile.ZipFile, limits: Limits = LIMITS) -> None:
    """Refuse, before inflating anything, members that are too many, listed twice, or
    whose declared size or compression ratio is past the limits (a zip bomb). zipfile then
    inflates no member past its declared size: one that says less than it holds fails its
    CRC check, as a damaged member."""
    infos = archive.infolist()
    if len(infos) > limits.members:
        raise BundleError(f"{len(infos):,} members; a bundle has at most {limits.members}")
    twice = sorted(name for name, count in Counter(archive.namelist()).items() if count > 1)
    if twice:
        raise BundleError(f"{', '.join(twice)}: in the bundle more than once")
    for info in infos:
        check_member(info, limits)
    total = sum(info.file_size for info in infos)
    if total > limits.bundle_bytes:
        raise BundleError(
            f"its members inflate to {total:,} bytes, more than the {limits.bundle_bytes:,} "
            "a bundle may"
        )


def check_member(info: zipfile.ZipInfo, limits: Limits = LIMITS) -> None:
    name, size = info.filename, info.file_size
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise BundleError(f"{name}: compression method {info.compress_type}; bundles use deflate")
    if info.flag_bits & 0x1:
        raise BundleError(f"{name}: encrypted; bundles are not")
    cap = limits.bundle_bytes if name.endswith(".jsonl") else limits.document_bytes
    if size > cap:
        raise BundleError(f"{name}: inflates to {size:,} bytes, more than the {cap:,} it may")
    if size > limits.ratio_from and size > limits.ratio * max(info.compress_size, 1):
        raise BundleError(
            f"{name}: compressed {size // max(info.compress_size, 1):,} to 1, more than the "
            f"{limits.ratio} to 1 a bundle's members may be (a zip bomb?)"
        )


def verify(archive: zipfile.ZipFile, limits: Limits = LIMITS) -> None:
    """Refuse a bundle past the limits, then one whose members are not exactly those its
    checksums list, with the SHA-256 listed; then one whose manifest is not of a format
    version read here."""
    check_members(archive, limits)
    names = set(archive.namelist())
    listed = read_checksums(archive, limits)
    unlisted = sorted(names - set(listed) - {CHECKSUMS})
    if unlisted:
        raise BundleError(f"{', '.join(unlisted)}: not listed in {CHECKSUMS}")
    for name, expected in listed.items():
        if name not in names:
            raise BundleError(f"{name}: listed in {CHECKSUMS} but missing from the bundle")
        if member_sha256(archive, name) != expected:
            raise BundleError(
                f"{name}: its SHA-256 is not the one {CHECKSUMS} lists; the member was "
                "changed after the bundle was written"
            )
    check_manifest(read_json(archive, MANIFEST, limits))


def read_checksums(archive: zipfile.ZipFile, limits: Limits = LIMITS) -> dict[str, str]:
    try:
        text = read_member(archive, CHECKSUMS, limits.document_bytes).decode()
    except (KeyError, UnicodeDecodeError):
        raise BundleError(f"{CHECKSUMS}: missing or unreadable; this is not a bundle") from None
    listed: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            raise BundleError(f"{CHECKSUMS}, line {number}: not '<sha256>  <member>'")
        if name in listed:
            raise BundleError(f"{CHECKSUMS}, line {number}: {name} listed twice")
        listed[name] = digest
    return listed


def check_manifest(manifest: Any) -> None:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError(f"{MANIFEST}: not the manifest of a {FORMAT}")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise BundleError(
            f"{MANIFEST}: format version {manifest.get('format_version')!r}; "
            f"this version of the platform reads version {FORMAT_VERSION}"
        )


def member_sha256(archive: zipfile.ZipFile, name: str) -> str:
    digest = hashlib.sha256()
    with open_member(archive, name) as stream:
        while chunk := read_checked(stream, name, 1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def open_member(archive: zipfile.ZipFile, name: str) -> IO[bytes]:
    """The member as a stream; KeyError if it is not in the bundle."""
    try:
        return archive.open(name)
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as error:
        raise BundleError(f"{name}: damaged, cannot be read ({error})") from None


def read_checked(stream: IO[bytes], name: str, size: int, line: bool = False) -> bytes:
    """Up to `size` bytes (a line, with `line`); a damaged member is refused by name."""
    try:
        return stream.readline(size) if line else stream.read(size)
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        # zipfile checks each member's CRC-32 too: a byte changed in place fails here, and so
        # does a member that holds more than its declared size.
        raise BundleError(f"{name}: damaged, cannot be read ({error})") from None


def read_member(archive: zipfile.ZipFile, name: str, cap: int) -> bytes:
    """The whole member, refused if it holds more than `cap` bytes (its declared size was
    checked already; this holds whatever the zip says)."""
    with open_member(archive, name) as stream:
        data = read_checked(stream, name, cap + 1)
        if len(data) > cap:
            raise BundleError(f"{name}: more than the {cap:,} bytes it may hold")
        read_checked(stream, name, 1)  # to the end, so that zipfile checks its CRC-32
        return data


def loads(data: bytes) -> Any:
    """JSON as the bundle writes it: no NaN or Infinity, nesting within Python's stack."""
    try:
        return json.loads(data, parse_constant=refuse_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def read_json(archive: zipfile.ZipFile, name: str, limits: Limits = LIMITS) -> Any:
    try:
        return loads(read_member(archive, name, limits.document_bytes))
    except KeyError:
        raise BundleError(f"{name}: missing from the bundle") from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise BundleError(f"{name}: not JSON ({error})") from None


def read_jsonl(
    archive: zipfile.ZipFile, name: str, limits: Limits = LIMITS
) -> Iterator[tuple[int, Any]]:
    """(line number, record) for each line, read as a stream, a line at most line_bytes."""
    try:
        stream = open_member(archive, name)
    except KeyError:
        raise BundleError(f"{name}: missing from the bundle") from None
    with stream:
        number = 0
        while line := read_checked(stream, name, limits.line_bytes + 1, line=True):
            number += 1
            if len(line) > limits.line_bytes:
                raise BundleError(
                    f"{name}, line {number}: longer than the {limits.line_bytes:,} bytes "
                    "a line may be"
                )
            try:
                yield number, loads(line)
            except ValueError as error:
                raise BundleError(f"{name}, line {number}: not JSON ({error})") from None
