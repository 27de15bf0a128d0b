"""Reading published data files row by row, with errors that name the file, line and column.

Pure Python: decoding (UTF-8, with or without BOM), line endings (LF, CRLF and the CR CR LF
of some E2E submissions), CSV or TSV by the header, JSON Lines.
"""

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass


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


def decode(data: bytes, file_name: str, max_bytes: int) -> str:
    if len(data) > max_bytes:
        raise DataFileError(
            file_name, f"the file is {len(data):,} bytes; the limit is {max_bytes:,}"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise DataFileError(
            file_name, f"not UTF-8 text (byte 0x{data[error.start]:02x}); save it as UTF-8", line
        ) from None
    if not text.strip():
        raise DataFileError(file_name, "the file is empty")
    if "\x00" in text:
        raise DataFileError(file_name, "the file contains NUL bytes; is it a binary file?")
    return text.replace("\r\r\n", "\n").replace("\r\n", "\n")


def read_table(text: str, file_name: str, required: list[str]) -> Iterator[Row]:
    """Rows of a CSV or TSV (told apart by the header line) as dicts, with their line."""
    header_line = text.split("\n", 1)[0]
    delimiter = "\t" if "\t" in header_line else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = [name.strip() for name in next(reader)]
    except csv.Error as error:
        raise DataFileError(file_name, f"unreadable header: {error}", 1) from None
    missing = [name for name in required if name not in header]
    if missing:
        raise DataFileError(file_name, f"missing column(s): {', '.join(missing)}", 1)
    return _table_rows(reader, header, file_name)


def _table_rows(reader, header: list[str], file_name: str) -> Iterator[Row]:
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


def read_json_lines(text: str, file_name: str) -> Iterator[Row]:
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            raise DataFileError(file_name, f"not JSON: {error.msg}", number) from None
        if not isinstance(value, dict):
            raise DataFileError(file_name, "each line must be a JSON object", number)
        yield Row(number, value)


def is_json_lines(file_name: str, text: str) -> bool:
    return file_name.endswith((".jsonl", ".json")) or text.lstrip().startswith("{")


def unquote(value: str) -> str:
    """Strip one layer of single quotes that some E2E outputs files wrap around fields."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].strip()
    return value
