"""A dataset's folder sent as a .zip archive, unpacked with bounds (no Django).

An archive is untrusted: its member names may point outside the folder it is unpacked in
(`../`, absolute paths, links), and its declared sizes may lie, so that a few kilobytes
unpack to gigabytes (a zip bomb). `unpack_zip` refuses such an archive before it has
written anything outside `target`, counts the bytes it really writes and stops at
`max_bytes`, and does not unpack archives inside the archive.
"""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

from .datafiles import DataFileError
from .dataset_files import inside, relative_name, shown

CHUNK = 1 << 16
# Folders and files that archivers add and no dataset needs (macOS's resource forks).
IGNORED = ("__MACOSX/",)
# A member's name: the datasets' deepest path is logicnlg/tables/<file>, 60 characters.
MAX_NAME_CHARS = 1024
MAX_DEPTH = 32


def unpack_zip(archive: Path, target: Path, *, name: str, max_bytes: int, max_files: int) -> Path:
    """Unpack `archive` into the empty folder `target`; the dataset's folder inside it (the
    archive's single top folder, if everything is in one). `name` is the archive's name as
    the organiser gave it, for messages."""
    try:
        with zipfile.ZipFile(archive) as zipped:
            members = [info for info in zipped.infolist() if not ignored(info)]
            check_members(members, name, max_bytes, max_files)
            written = 0
            for info in members:
                written = unpack_member(zipped, info, target, name, written, max_bytes)
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError) as error:
        # A damaged archive (a checksum that does not match), an encrypted member, or a
        # compression method zipfile cannot read.
        raise DataFileError(name, f"not a readable .zip archive ({error})") from None
    return dataset_root(target)


def ignored(info: zipfile.ZipInfo) -> bool:
    return info.filename.startswith(IGNORED) or info.filename.endswith("/.DS_Store")


def check_members(
    members: list[zipfile.ZipInfo], name: str, max_bytes: int, max_files: int
) -> None:
    if not members:
        raise DataFileError(name, "the archive is empty")
    if len(members) > max_files:
        raise DataFileError(name, f"{len(members):,} entries; the limit is {max_files:,}")
    declared = sum(info.file_size for info in members)
    if declared > max_bytes:
        raise DataFileError(name, f"unpacks to {declared:,} bytes; the limit is {max_bytes:,}")
    for info in members:
        member_path(info, name)  # every name is checked before anything is written


def member_path(info: zipfile.ZipInfo, name: str) -> PurePosixPath:
    """The member's path inside the folder; an error for a name that could leave it."""
    raw = info.filename
    if not relative_name(raw):
        raise DataFileError(name, f"entry {shown(raw)!r} points outside the archive's folder")
    if len(raw) > MAX_NAME_CHARS or raw.count("/") > MAX_DEPTH:
        # Before the file system's own limits turn it into an OSError mid-unpacking.
        message = f"entry {shown(raw)!r} is nested too deep or named too long"
        raise DataFileError(name, message)
    if stat.S_ISLNK(info.external_attr >> 16):
        message = f"entry {shown(raw)!r} is a link; the archive must hold files only"
        raise DataFileError(name, message)
    return PurePosixPath(raw)


def unpack_member(
    zipped: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    target: Path,
    name: str,
    written: int,
    max_bytes: int,
) -> int:
    """Write one member under `target`; the bytes written so far, this member's included.
    The count is of the bytes really unpacked, not of the sizes the archive declares."""
    parts = member_path(info, name).parts
    destination = inside(target, *parts)
    if destination is None:
        message = f"entry {shown(info.filename)!r} points outside the archive's folder"
        raise DataFileError(name, message)
    if info.is_dir():
        destination.mkdir(parents=True, exist_ok=True)
        return written
    destination.parent.mkdir(parents=True, exist_ok=True)
    with zipped.open(info) as source, destination.open("wb") as out:
        while chunk := source.read(CHUNK):
            written += len(chunk)
            if written > max_bytes:
                raise DataFileError(name, f"unpacks to more than {max_bytes:,} bytes: refused")
            out.write(chunk)
    return written


def dataset_root(folder: Path) -> Path:
    """The folder the dataset's files are in: `folder`, or the one folder it holds (an
    archive of `logicnlg/` unpacks to `logicnlg/...`), followed down."""
    while True:
        entries = [entry for entry in folder.iterdir() if entry.name != "__MACOSX"]
        if len(entries) != 1 or not entries[0].is_dir():
            return folder
        folder = entries[0]
