"""annotation/uploads.py: the line count the importers' reading gives, and the progress
file the job's page reads."""

import io
import itertools

import pytest

from annotation.uploads import CountingFile, ProgressFile, read_progress, system_name_of
from nlgdata.datafiles import DataFileError


def test_counting_file_reports_lines_read_of_those_its_first_pass_counted(monkeypatch):
    monkeypatch.setattr("annotation.uploads.REPORTS_PER_FILE", 2)
    reports = []
    file = CountingFile(io.BytesIO(b"a\nb\nc\nd\ne\n"), lambda *r: reports.append(r))
    assert file.read(4) + file.read(100) == b"a\nb\nc\nd\ne\n"  # the checking pass
    assert file.seek(0) == 0
    while file.readline():
        pass
    assert reports == [(0, 5), (2, 5), (4, 5), (5, 5)] and file.lines == 5


def test_counting_file_reports_a_small_file_as_it_is_read():
    """E2E's outputs files have 631 lines: they used to report 0 of 631 until the end."""
    reports = []
    text = b"MR\toutput\n" + b"".join(b"mr %d\tout %d\n" % (n, n) for n in range(630))
    file = CountingFile(io.BytesIO(text), lambda *r: reports.append(r))
    while file.read(4096):
        pass
    file.seek(0)
    while file.readline():
        pass
    lines = [done for done, total in reports if total == 631]
    assert lines[0] == 0 and lines[-1] == 631 and lines == sorted(lines)
    assert max(b - a for a, b in itertools.pairwise(lines)) == 6  # a hundredth of the file
    assert len(reports) == 1 + 105 + 1


def test_counting_file_reports_a_large_file_every_2000_lines_at_most():
    reports = []
    file = CountingFile(io.BytesIO(b"x\n" * 500_000), lambda *r: reports.append(r))
    while file.read(65536):
        pass
    file.seek(0)
    while file.readline():
        pass
    assert [done for done, _ in reports[:3]] == [0, 2000, 4000]
    assert reports[-1] == (500_000, 500_000)


def test_progress_file_is_read_back_by_the_page(tmp_path, settings):
    settings.UPLOAD_DIR = tmp_path

    class Job:
        pk = 7

    (tmp_path / "7").mkdir()
    assert read_progress(Job()) is None  # the worker has not started reading
    progress = ProgressFile(tmp_path / "7" / "progress.json", files=3)
    progress.start(2, "slug.tsv")
    progress.lines_read(4000, 6000)
    shown = read_progress(Job())
    assert shown is not None
    assert (shown.file_number, shown.files) == (2, 3)
    assert (shown.file_name, shown.lines, shown.total_lines) == ("slug.tsv", 4000, 6000)


def test_system_name_of_an_outputs_file_is_its_name_without_the_extension():
    assert system_name_of("tgen.tsv") == "tgen" and system_name_of("slug-alt.csv") == "slug-alt"
    assert system_name_of("Amazon_AI_(Shanghai).tsv") == "Amazon_AI_(Shanghai)"
    with pytest.raises(DataFileError, match="tgen .tsv: the file name does not make"):
        system_name_of("tgen .tsv")
