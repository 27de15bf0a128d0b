import csv
import hashlib
import io
import json
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlgdata import datafiles
from nlgdata.datafiles import (
    DataFileError,
    batches,
    check_file,
    parse_json_line,
    read_json_lines,
    read_lines,
    read_table,
)

FUZZ = settings(max_examples=150, deadline=None)
# Characters that matter to line splitting, CSV quoting and whitespace.
TABLE_TEXT = st.text(alphabet="ab ,\t\"'\r\n\ufeff", max_size=60)


def lines_of(data: bytes, name: str = "f.csv") -> list[str]:
    return list(read_lines(io.BytesIO(data), name))


def old_decode(data: bytes) -> str:
    """How files were read whole, before streaming: the behaviour to keep."""
    return data.decode("utf-8-sig").replace("\r\r\n", "\n").replace("\r\n", "\n")


def outcome(function, *args):
    try:
        return function(*args)
    except (DataFileError, csv.Error) as error:
        return str(error)


def test_check_file_hashes_the_bytes_and_rewinds():
    data = b"\xef\xbb\xbf  mr,ref\n"
    file = io.BytesIO(data)
    checked = check_file(file, "f.csv", 100)
    assert checked.sha256 == hashlib.sha256(data).hexdigest()
    assert checked.first_char == "m"
    assert file.tell() == 0


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "f.csv: the file is empty"),
        (b"\xef\xbb\xbf \r\n\t", "f.csv: the file is empty"),
        (b"a\nb\n\xe9t\xc3", "f.csv, line 3: not UTF-8 text (byte 0xe9)"),
        (b"a\nb\xc3", "f.csv, line 2: not UTF-8 text (byte 0xc3)"),
        (b"a\nb\nc\x00d", "f.csv, line 3: the file contains NUL bytes"),
        (b"x" * 101, "f.csv: the file is over the limit of 100 bytes"),
    ],
    ids=["empty", "blank", "latin-1", "cut-short", "nul", "too-large"],
)
def test_check_file_refuses_with_file_and_line(data, message, monkeypatch):
    monkeypatch.setattr(datafiles, "CHUNK_BYTES", 2)  # errors across chunk boundaries
    with pytest.raises(DataFileError) as error:
        check_file(io.BytesIO(data), "f.csv", 100)
    assert str(error.value).startswith(message)


@FUZZ
@given(st.binary(max_size=40).filter(lambda data: b"\x00" not in data))
def test_check_file_agrees_with_decoding_the_whole_file(data):
    with mock.patch.object(datafiles, "CHUNK_BYTES", 3):  # characters across chunks
        got = outcome(check_file, io.BytesIO(data), "f.csv", 1000)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        # error.object: the bytes after a BOM (reading the whole file miscounted with one).
        line = error.object.count(b"\n", 0, error.start) + 1
        byte = error.object[error.start]
        assert got.startswith(f"f.csv, line {line}: not UTF-8 text (byte 0x{byte:02x})")
        return
    if not text.strip():
        assert got == "f.csv: the file is empty"
    else:
        assert got.first_char == text.lstrip()[0]


def test_read_lines_reads_published_line_ends_as_lf():
    data = b"\xef\xbb\xbfa\r\r\nb\r\nc\rd\ne"
    assert lines_of(data) == ["a\n", "b\n", "c\rd\n", "e"]


def test_read_lines_refuses_an_overlong_line(monkeypatch):
    monkeypatch.setattr(datafiles, "MAX_LINE_BYTES", 4)
    with pytest.raises(DataFileError, match="f.csv, line 2: longer than 4 bytes"):
        lines_of(b"abc\nabcdef\n")


@FUZZ
@given(TABLE_TEXT.filter(lambda text: old_decode(text.encode()).strip()))
def test_read_table_reads_as_whole_file_reading_did(text):
    """Streaming line by line keeps the rows and line numbers of reading the file whole."""
    data = text.encode()
    old = outcome(lambda: [(r.line, r.values) for r in old_read_table(old_decode(data))])
    new = outcome(lambda: [(r.line, r.values) for r in read_table(lines_of(data), "f.csv", [])])
    assert new == old


def old_read_table(text: str):
    """read_table as it was, on the whole text."""
    delimiter = "\t" if "\t" in text.split("\n", 1)[0] else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = [name.strip() for name in next(reader)]
    except csv.Error as error:
        raise DataFileError("f.csv", f"unreadable header: {error}", 1) from None
    return datafiles._table_rows(reader, header, "f.csv")


@FUZZ
@given(st.text(alphabet='{}"a1 \r\n:,', max_size=40))
def test_read_json_lines_numbers_lines_as_split_on_lf(text):
    data = text.encode()
    lines = enumerate(old_decode(data).split("\n"), start=1)
    old = outcome(
        lambda: [(n, parse_json_line(raw, "f.jsonl", n)) for n, raw in lines if raw.strip()]
    )
    new = outcome(lambda: [(r.line, r.values) for r in read_json_lines(lines_of(data), "f.jsonl")])
    assert new == old


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"a": {"b": [1, NaN]}}', "f.jsonl, line 7, column a.b[1]: NaN is not a number JSON"),
        ('{"a": -Infinity}', "f.jsonl, line 7, column a: -Infinity is not a number JSON"),
        ('{"a": 1e999}', "f.jsonl, line 7, column a: 1e999 is too large a number"),
        ('{"a": ' + "1" * 5000 + "}", "f.jsonl, line 7, column a: 111111111111… is a number"),
        ('{"a": ["x\\u0000"]}', "f.jsonl, line 7, column a[0]: contains a NUL character"),
        ('{"a\\u0000": 1}', "f.jsonl, line 7, column 'a\\x00': the name contains a NUL"),
        ('{"a": "\\udc00x"}', "f.jsonl, line 7, column a: contains a lone surrogate (\\udc00)"),
        ('{"a": ' + "[" * 40 + "]" * 40 + "}", "f.jsonl, line 7, column a[0][0][0]"),
        ('{"a": 1, "b": ' + "[" * 10**5 + "]" * 10**5 + "}", "f.jsonl, line 7, column b: nested"),
        ("[" * 10**5 + "]" * 10**5, "f.jsonl, line 7: nested deeper than 32 levels"),
        ("[1]", "f.jsonl, line 7: each line must be a JSON object"),
        ("{'a': 1}", "f.jsonl, line 7: not JSON: Expecting property name"),
    ],
    ids=[
        "nan",
        "infinity",
        "overflow",
        "long-int",
        "nul",
        "nul-name",
        "surrogate",
        "deep",
        "deeper-than-python",
        "deep-array",
        "array",
        "quotes",
    ],
)
def test_parse_json_line_names_line_and_field_of_what_cannot_be_stored(raw, message):
    with pytest.raises(DataFileError) as error:
        parse_json_line(raw, "f.jsonl", 7)
    assert str(error.value).startswith(message)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.sampled_from('a\x00\ud800\udfffé"\\\n') | st.characters(), max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=12,
)


@FUZZ
@given(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=4), st.booleans())
def test_parse_json_line_gives_storable_objects_or_a_located_error(value, ascii_only):
    raw = json.dumps(value, ensure_ascii=ascii_only)
    try:
        parsed = parse_json_line(raw, "f.jsonl", 3)
    except DataFileError as error:
        assert str(error).startswith("f.jsonl, line 3")
        return
    stored = json.dumps(parsed, allow_nan=False)
    assert "\\u0000" not in stored
    stored.encode("utf-8")


def test_batches_cut_at_rows_or_characters():
    rows = ["a", "bb", "ccc", "d", "e", "f"]
    assert list(batches(rows, 4, 5, len)) == [["a", "bb", "ccc"], ["d", "e", "f"]]
    assert list(batches(rows, 2, 100, len)) == [["a", "bb"], ["ccc", "d"], ["e", "f"]]
    assert list(batches([], 2, 100, len)) == []
