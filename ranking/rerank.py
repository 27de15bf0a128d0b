"""Ranking again from a bundle alone (ranking/bundle.py), with no database rows.

The bundle's checksums are verified first: a member changed after the bundle was written
is refused by name. Each stored run is then ranked again from the bundle's counted
judgments through the functions the worker uses (ranking_input_from_rows, rank_input,
result_rows), with the run's protocol, repetitions and seed, and compared with what the
run stored.
"""

import hashlib
import json
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from .bundle import CHECKSUMS, FORMAT, FORMAT_VERSION, JUDGMENTS, MANIFEST, RUNS
from .service import (
    RankingInput,
    ResultRow,
    rank_input,
    ranking_input_from_rows,
    result_rows,
)


class BundleError(ValueError):
    pass


@dataclass(frozen=True)
class Reranked:
    run: dict  # the run as the bundle stores it
    data: RankingInput[str]
    rows: list[ResultRow[str]]
    differences: list[str]  # empty when the results are identical to the stored ones


def rerank_bundle(
    path: Path, criterion: str | None = None, protocol: str | None = None
) -> list[Reranked]:
    """Rank again every stored run of the bundle (or those of one criterion or protocol)."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        raise BundleError(f"{path}: not a readable zip file ({error})") from None
    with archive:
        verify(archive)
        runs = chosen_runs(read_json(archive, RUNS), criterion, protocol)
        return [rerank(archive, run) for run in runs]


def chosen_runs(runs: Any, criterion: str | None, protocol: str | None) -> list[dict]:
    if not isinstance(runs, list) or not all(isinstance(run, dict) for run in runs):
        raise BundleError(f"{RUNS}: not a list of runs")
    chosen = [
        run
        for run in runs
        if criterion in (None, run.get("criterion")) and protocol in (None, run.get("protocol"))
    ]
    if not chosen:
        wanted = f"criterion {criterion or 'any'}, protocol {protocol or 'any'}"
        raise BundleError(f"the bundle holds no finished run ({wanted})")
    return chosen


def rerank(archive: zipfile.ZipFile, run: dict) -> Reranked:
    try:
        criterion, protocol = run["criterion"], run["protocol"]
        repetitions, seed = run["repetitions"], run["seed"]
    except KeyError as error:
        raise BundleError(f"{RUNS}: run {run.get('id')} has no {error}") from None
    data = ranking_input_from_rows(counted_rows(archive, criterion))
    try:
        ranking = rank_input(data, protocol, repetitions, seed)
    except ValueError as error:  # NothingToRank, or a protocol this version does not know
        raise BundleError(f"{criterion}, {protocol}: {error}") from None
    rows = result_rows(data, ranking, protocol)
    return Reranked(run, data, rows, differences(run, data, rows))


def counted_rows(archive: zipfile.ZipFile, criterion: str) -> Iterator[tuple[int, str, str, float]]:
    """The criterion's counted judgments as (assignment, annotator, system, score), in the
    bundle's order, which is the order rankings read them in."""
    for line, record in read_jsonl(archive, JUDGMENTS):
        try:
            if record["criterion"] == criterion and record["counted"] is True:
                yield (
                    record["assignment"],
                    record["annotator"],
                    record["system"],
                    float(record["score"]),
                )
        except (KeyError, TypeError, ValueError) as error:
            raise BundleError(f"{JUDGMENTS}, line {line}: {error!r}") from None


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


def verify(archive: zipfile.ZipFile) -> None:
    """Refuse a bundle whose members are not exactly those its checksums list, with the
    SHA-256 listed; then one whose manifest is not of a format version read here."""
    names = archive.namelist()
    if len(names) != len(set(names)):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise BundleError(f"{', '.join(twice)}: in the bundle more than once")
    listed = read_checksums(archive)
    unlisted = sorted(set(names) - set(listed) - {CHECKSUMS})
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
    check_manifest(read_json(archive, MANIFEST))


def read_checksums(archive: zipfile.ZipFile) -> dict[str, str]:
    try:
        text = read_member(archive, CHECKSUMS).decode()
    except (KeyError, UnicodeDecodeError):
        raise BundleError(f"{CHECKSUMS}: missing or unreadable; this is not a bundle") from None
    listed = {}
    for number, line in enumerate(text.splitlines(), start=1):
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            raise BundleError(f"{CHECKSUMS}, line {number}: not '<sha256>  <member>'")
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
    try:
        with archive.open(name) as stream:
            while chunk := stream.read(1 << 20):
                digest.update(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        # zipfile checks each member's CRC-32 too: a byte changed in place fails here.
        raise BundleError(f"{name}: damaged, cannot be read ({error})") from None
    return digest.hexdigest()


def read_member(archive: zipfile.ZipFile, name: str) -> bytes:
    with archive.open(name) as stream:
        return stream.read()


def read_json(archive: zipfile.ZipFile, name: str) -> Any:
    try:
        return json.loads(read_member(archive, name))
    except KeyError:
        raise BundleError(f"{name}: missing from the bundle") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BundleError(f"{name}: not JSON ({error})") from None


def read_jsonl(archive: zipfile.ZipFile, name: str) -> Iterator[tuple[int, Any]]:
    """(line number, record) for each line, read as a stream."""
    try:
        stream = archive.open(name)
    except KeyError:
        raise BundleError(f"{name}: missing from the bundle") from None
    with stream:
        for number, line in enumerate(stream, start=1):
            try:
                yield number, json.loads(line)
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                raise BundleError(f"{name}, line {number}: not JSON ({error})") from None
