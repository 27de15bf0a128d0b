"""The files of a dataset's folder, read only from inside it, with bounds (no Django).

A published dataset's folder (an archive unpacked, or a folder on the server) is
untrusted, and so are the names in its files: LogicNLG's test_lm.json names its tables'
files. A name that is absolute, climbs out with `..`, or leads through a link to a file
outside the folder would turn any file the worker can read into items (issue 39 read the
worker's environment that way). Every reader in nlgdata takes its paths from here:
`file_inside` resolves a name against the folder and refuses one that leaves it, and the
readers refuse a file by its size before reading it, and a JSON document by its nesting
and its number of arrays and objects before parsing it. Errors name the file or entry,
never its contents.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from .datafiles import (
    DECODER,
    MAX_JSON_DEPTH,
    DataFileError,
    check_json_shape,
    find_problem,
    format_path,
)

# The largest file of the published datasets is LogicNLG's test_lm.json, 1.1 MB. A file
# read whole is refused above this, before a byte of it is read: parsing JSON takes several
# times its size in memory (a 300 MB test_lm.json took 850 MB).
MAX_FILE_BYTES = 32 * 1024 * 1024
# Names given by the data are shown in messages at most this long.
SHOWN_NAME = 80


def shown(name: str) -> str:
    """A name from the data, safe and short in a message."""
    text = name if name.isprintable() else ascii(name)[1:-1]
    return text if len(text) <= SHOWN_NAME else text[: SHOWN_NAME - 1] + "…"


def file_inside(root: Path, *parts: str, what: str = "file") -> Path:
    """The regular file `root`/`parts` as a resolved path, if it is inside `root` once every
    link is followed. DataFileError naming the entry for a part that is not a relative name
    (`relative_name`), a path that leads outside `root`, and one that is not a file."""
    entry = "/".join(parts)
    if not all(relative_name(part) for part in parts):
        raise DataFileError(shown(entry), f"not a {what} name inside the dataset's folder")
    found = inside(root, *parts)
    if found is None:
        raise DataFileError(shown(entry), "leads outside the dataset's folder: refused")
    try:
        if not found.is_file():
            raise DataFileError(shown(entry), f"no such {what} in the dataset's folder")
    except OSError:  # a name too long for the file system
        raise DataFileError(shown(entry), f"not a {what} that can be read") from None
    return found


def relative_name(part: str) -> bool:
    """Whether `part` names something below a folder: not empty, not absolute, no `..`, NUL,
    backslash or drive (C:)."""
    path = PurePosixPath(part)
    return not (
        not part
        or "\0" in part
        or "\\" in part
        or path.is_absolute()
        or ".." in path.parts
        or (bool(path.parts) and ":" in path.parts[0])
    )


def inside(root: Path, *parts: str) -> Path | None:
    """`root`/`parts` with every link followed, if that is `root` or below it; None if it
    leads elsewhere. The one test of "inside" that every reader of a dataset's folder, and
    the unpacking of archives, make. (os.path, not pathlib: a third of the time, for
    LogicNLG's 862 tables.)"""
    try:
        base = os.path.realpath(root)
        found = os.path.realpath(os.path.join(base, *parts))
    except (OSError, ValueError):  # ValueError: a NUL, which relative_name refuses first
        return None
    below = base.rstrip(os.sep) + os.sep
    return Path(found) if found == base or found.startswith(below) else None


def folder_inside(root: Path, *parts: str) -> Path | None:
    """The folder `root`/`parts`, resolved, if it exists inside `root`; None otherwise."""
    found = inside(root, *parts)
    return found if found is not None and found.is_dir() else None


def files_inside(root: Path, folder: str, pattern: str) -> list[Path]:
    """The files of `root`/`folder` whose names match `pattern` (a glob of names, as
    '*.tsv'), sorted by name, each checked by `file_inside`: a link among them that leads
    out is an error, not a file skipped in silence."""
    found = folder_inside(root, folder) if folder else root.resolve()
    if found is None:
        return []
    return [
        file_inside(root, *filter(None, [folder, entry.name]))
        for entry in sorted(found.glob(pattern), key=lambda entry: entry.name)
    ]


def read_text(path: Path, max_bytes: int = MAX_FILE_BYTES) -> str:
    """A file of `file_inside`, as UTF-8 text, refused by its size before it is read."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > max_bytes:
                raise DataFileError(path.name, f"{size:,} bytes; the limit is {max_bytes:,}")
            # No more than that size, should the file grow meanwhile (read(n) sets n
            # bytes aside at once: the limit itself would cost 32 MiB for a 1 kB file).
            raw = file.read(size + 1)
    except OSError as error:
        raise DataFileError(path.name, f"cannot be read ({error.strerror})") from None
    if len(raw) > size:
        raise DataFileError(path.name, "grew while it was read: refused")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise DataFileError(path.name, "not UTF-8 text", line) from None


def load_json(path: Path, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """A JSON document of `file_inside`, bounded in size, nesting and number of arrays and
    objects before it is parsed; every value one the database can store."""
    text = read_text(path, max_bytes)
    check_json_shape(text, path.name)
    try:
        value = DECODER.decode(text.removeprefix("\ufeff"))
    except RecursionError:  # the shape check bounds nesting well below Python's limit
        raise DataFileError(path.name, f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as error:
        line = getattr(error, "lineno", None)
        message = getattr(error, "msg", "unreadable")
        raise DataFileError(path.name, f"not JSON: {message}", line) from None
    problem = find_problem(value, 0)
    if problem is not None:
        raise DataFileError(path.name, problem[1], column=format_path(problem[0]))
    return value
