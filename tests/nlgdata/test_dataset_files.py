"""The files of a dataset's folder (nlgdata/dataset_files.py): read only from inside the
folder, bounded in size, nesting and containers before they are parsed, with errors that
name the entry and never show what a file holds (issue 39). The readers of the published
datasets are replayed with the attacks: a table named by an absolute path, by `..`, through
a link that leads out, a 100,000-deep and a 300 MB test_lm.json."""

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from nlgdata.datafiles import DataFileError
from nlgdata.dataset_files import (
    MAX_FILE_BYTES,
    file_inside,
    files_inside,
    inside,
    load_json,
    read_text,
)
from nlgdata.published import read_logicnlg, read_rotowire, read_webnlg2020

SECRET = "export SECRET_KEY=the-workers-own-secret"


@pytest.fixture
def secret(tmp_path) -> Path:
    """A file outside every dataset's folder, as the worker's environment file is: it is a
    valid LogicNLG table, so a reader that opened it would load it without complaint."""
    path = tmp_path / "outside" / "environ.html.csv"
    path.parent.mkdir()
    path.write_text(f"{SECRET}#b\n1#2\n")
    return path


def logicnlg_folder(base: Path, table_id: str, table: str | None = "a#b\n1#2\n") -> Path:
    """A LogicNLG folder with one table slot; the table's file written if `table`."""
    folder = base / "logicnlg"
    for name in ("data", "tables", "outputs"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    entries = {table_id: [["a statement", [0], "a title"]]}
    (folder / "data" / "test_lm.json").write_text(json.dumps(entries))
    if table is not None:
        (folder / "tables" / "t.html.csv").write_text(table)
    for name in ("field_infusing.json", "GPT_gpt2_12.65.json", "GPT_gpt2_C2F_13.35.json"):
        (folder / "outputs" / name).write_text(json.dumps({table_id: ["a statement"]}))
    return folder


def refusal(folder: Path) -> str:
    with pytest.raises(DataFileError) as raised:
        read_logicnlg(folder)
    return str(raised.value)


def test_logicnlg_reads_a_table_of_its_own_folder(tmp_path):
    dataset = read_logicnlg(logicnlg_folder(tmp_path, "t.html.csv"))
    assert [item.external_id for item in dataset.items] == ["t.html.csv:0"]
    assert dataset.items[0].data["header"] == ["a", "b"]


def test_logicnlg_table_named_by_an_absolute_path_is_never_read(tmp_path, secret):
    message = refusal(logicnlg_folder(tmp_path, str(secret)))
    assert message.startswith("tables//")  # the entry as test_lm.json names it, shortened
    assert message.endswith(": not a table file name inside the dataset's folder")
    assert SECRET not in message


def test_logicnlg_table_named_with_dots_is_never_read(tmp_path, secret):
    message = refusal(logicnlg_folder(tmp_path, "../../outside/environ.html.csv"))
    assert "not a table file name inside the dataset's folder" in message
    assert SECRET not in message


def test_logicnlg_table_through_a_link_that_leads_out_is_never_read(tmp_path, secret):
    folder = logicnlg_folder(tmp_path, "t.html.csv", table=None)
    (folder / "tables" / "t.html.csv").symlink_to(secret)
    assert refusal(folder) == "tables/t.html.csv: leads outside the dataset's folder: refused"


def test_logicnlg_proc_environ_is_refused_without_a_byte_of_it(tmp_path):
    message = refusal(logicnlg_folder(tmp_path, "/proc/self/environ"))
    assert message.startswith("tables//proc/self/environ: not a table file name")
    assert not any(value[:8] in message for value in os.environ.values() if len(value) >= 8)


def test_a_link_that_stays_inside_the_folder_is_followed(tmp_path):
    folder = logicnlg_folder(tmp_path, "t.html.csv", table=None)
    (folder / "copy.csv").write_text("a#b\n1#2\n")
    (folder / "tables" / "t.html.csv").symlink_to(folder / "copy.csv")
    assert read_logicnlg(folder).items[0].data["rows"] == [["1", "2"]]


@pytest.mark.parametrize(
    "parts",
    [("",), ("/etc/passwd",), ("a", "../../b"), ("a\\..\\b",), ("C:x",), ("a\0b",), ("..",)],
)
def test_file_inside_refuses_names_that_are_not_below_the_folder(tmp_path, parts):
    with pytest.raises(DataFileError, match="not a file name inside the dataset's folder"):
        file_inside(tmp_path, *parts)


def test_file_inside_names_a_missing_file_and_a_folder_as_missing(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in ("nothing.json", "sub"):
        with pytest.raises(DataFileError, match=f"^{name}: no such file in the dataset's"):
            file_inside(tmp_path, name)


def test_file_inside_shortens_a_long_name_and_survives_one_too_long(tmp_path):
    with pytest.raises(DataFileError) as raised:
        file_inside(tmp_path, "x" * 100_000)
    assert str(raised.value) == f"{'x' * 79}…: not a file that can be read"


def test_inside_is_none_for_a_loop_of_links(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(DataFileError):
        file_inside(tmp_path, "a")
    assert inside(tmp_path, "sub", "x") == tmp_path.resolve() / "sub" / "x"


def test_files_inside_refuses_a_link_among_the_files_it_lists(tmp_path, secret):
    root = tmp_path / "dataset"
    (root / "outputs").mkdir(parents=True)
    (root / "outputs" / "a.tsv").write_text("x")
    (root / "outputs" / "b.tsv").symlink_to(secret)
    with pytest.raises(DataFileError, match="^outputs/b.tsv: leads outside"):
        files_inside(root, "outputs", "*.tsv")
    (root / "outputs" / "b.tsv").unlink()
    assert [path.name for path in files_inside(root, "outputs", "*.tsv")] == ["a.tsv"]


def test_files_inside_a_folder_that_is_a_link_out_finds_nothing(tmp_path, secret):
    root = tmp_path / "dataset"
    root.mkdir()
    (root / "outputs").symlink_to(secret.parent)
    assert files_inside(root, "outputs", "*.csv") == []


def test_webnlg_outputs_through_a_link_that_leads_out_are_refused(tmp_path, secret):
    root = tmp_path / "dataset"
    (root / "inputs").mkdir(parents=True)
    (root / "outputs").mkdir()
    (root / "inputs" / "en_sampled_triples.json").write_text('{"1": [["a", "b", "c"]]}')
    (root / "outputs" / "team.primary.en").symlink_to(secret)
    with pytest.raises(DataFileError, match="^outputs/team.primary.en: leads outside"):
        read_webnlg2020(root)


def test_rotowire_games_through_a_link_that_leads_out_are_refused(tmp_path, secret):
    root = tmp_path / "dataset"
    (root / "games").mkdir(parents=True)
    (root / "games" / "part.jsonl").symlink_to(secret)
    with pytest.raises(DataFileError, match="^games/part.jsonl: leads outside"):
        read_rotowire(root)


def test_a_100000_deep_test_lm_json_is_a_clear_error(tmp_path):
    folder = logicnlg_folder(tmp_path, "t.html.csv")
    (folder / "data" / "test_lm.json").write_text("{\n" + "[" * 100_000 + "]" * 100_000 + "}")
    assert refusal(folder) == "test_lm.json, line 2: nested deeper than 32 levels"


def test_a_300_mb_test_lm_json_is_refused_by_its_size_before_it_is_read(tmp_path):
    folder = logicnlg_folder(tmp_path, "t.html.csv")
    os.truncate(folder / "data" / "test_lm.json", 300 * 1024 * 1024)  # sparse: no disk used
    tracemalloc.start()
    try:
        message = refusal(folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert message == f"test_lm.json: 314,572,800 bytes; the limit is {MAX_FILE_BYTES:,}"
    assert peak < 1024 * 1024  # before: 850 MB


def test_load_json_refuses_many_tiny_containers_before_parsing(tmp_path):
    path = tmp_path / "many.json"
    path.write_text("[" + "[]," * 1_000_000 + "[]]")  # 3 MB that would parse to 60 MB
    with pytest.raises(DataFileError, match="^many.json: more than 1,000,000 arrays and obj"):
        load_json(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"a": NaN}', "a: NaN is not a number JSON allows"),
        ('{"a": ' + "9" * 5000 + "}", "a: 999999999999… is a number of more than 18 digits"),
        ('{"a": "x\\u0000"}', "a: contains a NUL character"),
        ('{"a": [1, }', "not JSON"),
        ('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', None),
        ('{"a": "unterminated \\" [[[[[[', "not JSON"),
    ],
)
def test_load_json_names_what_it_refuses(tmp_path, text, message):
    path = tmp_path / "doc.json"
    path.write_text(text)
    if message is None:  # brackets inside a string are text, not nesting
        assert load_json(path) == {"a": "[" * 40}
        return
    with pytest.raises(DataFileError, match="^doc.json") as raised:
        load_json(path)
    assert message in str(raised.value)


def test_read_text_names_the_line_of_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / "t.html.csv"
    path.write_bytes(b"a#b\n\xff#2\n")
    with pytest.raises(DataFileError, match=r"^t.html.csv, line 2: not UTF-8 text$"):
        read_text(path)
