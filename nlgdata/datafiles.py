"""Reading published data files row by row, with errors that name the file, line and column.

Pure Python: decoding (UTF-8, with or without BOM), line endings (LF, CRLF and the CR CR LF
of some E2E submissions), CSV or TSV by the header, JSON Lines. Files are read as streams
of lines, so memory follows the longest row, not the file.
"""

import codecs
import csv
import hashlib
import io
import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, TypeVar

if TYPE_CHECKING:
    from _csv import Reader as CsvReader  # what csv.reader() returns

CHUNK_BYTES = 1024 * 1024
# No row of any format we read comes near this; a longer one is a broken or hostile file.
MAX_LINE_BYTES = 16 * 1024 * 1024
# The deepest input kind (boxscore: line > input > players > player > stats) needs 5.
MAX_JSON_DEPTH = 32
# Each array or object parsed costs 56 bytes or more whatever its text's size ("[]" is two
# characters): bounded, so a file of tiny containers stays small too. test_lm.json: 16,000.
MAX_JSON_CONTAINERS = 1_000_000
# Larger integers are refused before int() (Python's 4300-digit limit) and fit 64 bits.
MAX_INT_DIGITS = 18
# PostgreSQL text and jsonb refuse NUL; a lone surrogate cannot be encoded as UTF-8.
BAD_TEXT = re.compile("[\x00\ud800-\udfff]")

T = TypeVar("T")


class DataFileError(ValueError):
    def __init__(self, file_name: str, message: str, line: int | None = None, column: str = ""):
        self.file_name, self.line, self.column, self.message = file_name, line, column, message
        where = [file_name]
        if line is not None:
            where.append(f"line {line}")
        if column:
            where.append(f"column {column}")
        super().__init__(f"{', '.join(where)}: {message}")


@dataclass(frozen=True)
class Row:
    line: int
    values: dict


@dataclass(frozen=True)
class Checked:
    """What one pass over a file's bytes found out."""

    sha256: str
    first_char: str  # the first character that is not white space


def check_file(file: BinaryIO, file_name: str, max_bytes: int) -> Checked:
    """Read the file once, in chunks: refuse it when it is over `max_bytes`, not UTF-8,
    empty or binary; hash it. The file is left at its start for `read_lines`."""
    # Plain UTF-8 and the BOM dropped by hand: "utf-8-sig" takes a file cut short inside
    # its BOM (b"\xef") for an empty one.
    digest, decoder = hashlib.sha256(), codecs.getincrementaldecoder("utf-8")()
    size, lines, first, started = 0, 1, "", False
    while chunk := file.read(CHUNK_BYTES):
        size += len(chunk)
        if size > max_bytes:
            raise DataFileError(file_name, f"the file is over the limit of {max_bytes:,} bytes")
        digest.update(chunk)
        text = _decode(decoder, chunk, file_name, lines)
        if text and not started:
            text, started = text.removeprefix("\ufeff"), True
        if "\x00" in text:
            line = lines + text.count("\n", 0, text.index("\x00"))
            raise DataFileError(file_name, "the file contains NUL bytes; is it binary?", line)
        first = first or text.lstrip()[:1]
        lines += text.count("\n")
    _decode(decoder, b"", file_name, lines, final=True)
    if not first:
        raise DataFileError(file_name, "the file is empty")
    file.seek(0)
    return Checked(digest.hexdigest(), first)


def _decode(
    decoder: codecs.IncrementalDecoder,
    chunk: bytes,
    file_name: str,
    lines: int,
    final: bool = False,
) -> str:
    try:
        return decoder.decode(chunk, final)
    except UnicodeDecodeError as error:
        # error.object is the decoder's pending bytes (never a newline) and this chunk.
        line = lines + error.object.count(b"\n", 0, error.start)
        byte = error.object[error.start]
        raise DataFileError(
            file_name, f"not UTF-8 text (byte 0x{byte:02x}); save it as UTF-8", line
        ) from None


def read_lines(file: BinaryIO, file_name: str) -> Iterator[str]:
    """The lines of a file that passed `check_file`, decoded, CR CR LF and CRLF read as LF."""
    for number in itertools.count(1):
        raw = file.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            raise DataFileError(file_name, f"longer than {MAX_LINE_BYTES:,} bytes", number)
        if number == 1 and raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:  # the file changed since it was checked
            raise DataFileError(file_name, "not UTF-8 text", number) from None
        yield _lf(line)


def _lf(line: str) -> str:
    if line.endswith("\r\r\n"):
        line = line[:-3] + "\n"
    if line.endswith("\r\n"):
        line = line[:-2] + "\n"
    return line


def batches(
    rows: Iterable[T], max_rows: int, max_chars: int, size: Callable[[T], int]
) -> Iterator[list[T]]:
    """Lists of rows, cut at `max_rows` rows or `max_chars` characters, whichever is first,
    so a batch of long rows stays as small in memory as one of short rows."""
    batch, chars = [], 0
    for row in rows:
        batch.append(row)
        chars += size(row)
        if len(batch) >= max_rows or chars >= max_chars:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch


# Tables -------------------------------------------------------------------------------------


def read_table(lines: Iterable[str], file_name: str, required: list[str]) -> Iterator[Row]:
    """Rows of a CSV or TSV (told apart by the header line) as dicts, with their line."""
    lines = iter(lines)
    header_line = next(lines, "")
    delimiter = "\t" if "\t" in header_line.split("\n", 1)[0] else ","
    reader = csv.reader(_csv_lines(itertools.chain([header_line], lines)), delimiter=delimiter)
    try:
        header = [name.strip() for name in next(reader, [])]
    except csv.Error as error:
        raise DataFileError(file_name, f"unreadable header: {error}", 1) from None
    missing = [name for name in required if name not in header]
    if missing:
        raise DataFileError(file_name, f"missing column(s): {', '.join(missing)}", 1)
    return _table_rows(reader, header, file_name)


def _csv_lines(lines: Iterable[str]) -> Iterator[str]:
    """Lines split as a text file opened with newline='' splits them: a lone CR ends one."""
    for line in lines:
        if "\r" in line:
            yield from io.StringIO(line, newline="")
        else:
            yield line


def _table_rows(reader: "CsvReader", header: list[str], file_name: str) -> Iterator[Row]:
    last_line = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise DataFileError(file_name, f"unreadable row: {error}", last_line + 1) from None
        line, last_line = last_line + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise DataFileError(
                file_name, f"{len(cells)} fields where the header has {len(header)}", line
            )
        yield Row(line, dict(zip(header, cells, strict=True)))


# JSON Lines ---------------------------------------------------------------------------------


class Refused:
    """A JSON value that cannot be stored, kept in its place so the error can name it."""

    def __init__(self, message: str):
        self.message = message


def _parse_int(text: str) -> int | Refused:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        return Refused(f"{text[:12]}… is a number of more than {MAX_INT_DIGITS} digits")
    return int(text)


def _parse_float(text: str) -> float | Refused:
    value = float(text)
    return value if math.isfinite(value) else Refused(f"{text[:20]} is too large a number")


DECODER = json.JSONDecoder(
    parse_int=_parse_int,
    parse_float=_parse_float,
    parse_constant=lambda name: Refused(f"{name} is not a number JSON allows"),
)


def read_json_lines(lines: Iterable[str], file_name: str) -> Iterator[Row]:
    for number, line in enumerate(lines, start=1):
        raw = line.removesuffix("\n")
        if raw.strip():
            yield Row(number, parse_json_line(raw, file_name, number))


def parse_json_line(raw: str, file_name: str, line: int) -> dict:
    """One JSON object, every value of which the database can store."""
    try:
        value = DECODER.decode(raw)
    except json.JSONDecodeError as error:
        raise DataFileError(file_name, f"not JSON: {error.msg}", line) from None
    except RecursionError:
        message = f"nested deeper than {MAX_JSON_DEPTH} levels"
        raise DataFileError(file_name, message, line, deep_field(raw)) from None
    if not isinstance(value, dict):
        raise DataFileError(file_name, "each line must be a JSON object", line)
    problem = find_problem(value, 0)
    if problem is not None:
        path, message = problem
        raise DataFileError(file_name, message, line, format_path(path))
    return value


def find_problem(value: object, depth: int) -> tuple[list, str] | None:
    """The path to the first value that cannot be stored, and why; None if all can."""
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, Refused):
        return [], value.message
    members: Iterable[tuple[object, object]]
    if isinstance(value, dict):
        members = value.items()
    elif isinstance(value, list):
        members = enumerate(value)
    else:
        return None
    if depth >= MAX_JSON_DEPTH:
        return [], f"nested deeper than {MAX_JSON_DEPTH} levels"
    for key, member in members:
        if isinstance(key, str) and (problem := text_problem(key)) is not None:
            return [key], f"the name {problem[1]}"
        if (problem := find_problem(member, depth + 1)) is not None:
            return [key, *problem[0]], problem[1]
    return None


def text_problem(text: str) -> tuple[list, str] | None:
    found = BAD_TEXT.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return [], "contains a NUL character (\\u0000)"
    return [], f"contains a lone surrogate ({ascii(found.group())[1:-1]}); not Unicode text"


def format_path(path: list) -> str:
    """['input', 'rows', 0, 1] -> 'input.rows[0][1]', names shown safely."""
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            shown = step if step.isprintable() and len(step) <= 40 else ascii(step[:40])
            text += f".{shown}" if text else shown
    return text


JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:]')


def deep_field(raw: str) -> str:
    """The top-level field under which a line too deep for the JSON parser goes too deep."""
    depth, key, last_string = 0, "", ""
    for token in JSON_TOKEN.finditer(raw):
        text = token.group()
        if text in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return key
        elif text in "]}":
            depth -= 1
        elif text == ":" and depth == 1:
            key = format_path([last_string[1:-1]])  # as written, escapes and all
        else:
            last_string = text
    return key


# A JSON string, its escapes skipped; an unterminated one is taken to the end of the text,
# so that no text makes the scan go back over itself.
JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"?')
BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
BYTE_STEP = {ord(bracket): step for bracket, step in BRACKET_STEP.items()}
NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in BYTE_STEP)
JSON_TOKENS = re.compile(JSON_STRING.pattern + r"|(?P<bracket>[\[\]{}])")


def check_json_shape(
    text: str,
    file_name: str,
    *,
    max_depth: int = MAX_JSON_DEPTH,
    max_containers: int = MAX_JSON_CONTAINERS,
) -> None:
    """Refuse JSON nested deeper than `max_depth` or holding more than `max_containers`
    arrays and objects before it is parsed: DataFileError naming the line. The brackets
    outside strings are counted by the regular expression engine, not a Python loop: 1 MB
    of test_lm.json takes milliseconds."""
    outside_strings = JSON_STRING.sub("", text)
    containers = outside_strings.count("[") + outside_strings.count("{")
    if containers > max_containers:
        raise DataFileError(file_name, f"more than {max_containers:,} arrays and objects")
    # As bytes (UTF-8 never uses a bracket's byte inside another character), all else gone.
    brackets = outside_strings.encode(errors="surrogatepass").translate(None, NOT_BRACKETS)
    if max(itertools.accumulate(map(BYTE_STEP.__getitem__, brackets)), default=0) > max_depth:
        message = f"nested deeper than {max_depth} levels"
        raise DataFileError(file_name, message, line_too_deep(text, max_depth))


def line_too_deep(text: str, max_depth: int) -> int:
    """The line where `text` first goes deeper than `max_depth` (an error's slow path)."""
    depth = 0
    for token in JSON_TOKENS.finditer(text):
        if token.lastgroup == "bracket":
            depth += BRACKET_STEP[token.group()]
            if depth > max_depth:
                return text.count("\n", 0, token.start()) + 1
    return 1


def is_json_lines(file_name: str, text: str) -> bool:
    """JSON Lines by the name, or by the file's text (its first character will do)."""
    return file_name.endswith((".jsonl", ".json")) or text.lstrip().startswith("{")


def unquote(value: str) -> str:
    """Strip one layer of single quotes that some E2E outputs files wrap around fields."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].strip()
    return value
