"""DA, pairwise and ESA judgment files (nlgdata/judgment_files.py): read, refuse, write."""

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlgdata.csvcells import guard, unguard
from nlgdata.datafiles import DataFileError, read_lines
from nlgdata.judgment_files import (
    READERS,
    WRITERS,
    DaJudgment,
    DataFileErrors,
    EsaJudgment,
    PairwiseJudgment,
    Span,
    check_spans,
    read_da,
    read_esa,
    read_pairwise,
    write_da,
    write_esa,
    write_pairwise,
)

ROUND_TRIP = settings(max_examples=60, deadline=None)


def lines(text: str) -> list[str]:
    return list(read_lines(io.BytesIO(text.encode()), "f"))


def read(reader, text: str, **options) -> list:
    return list(reader(lines(text), "f.csv", **options))


def errors_of(reader, text: str, **options) -> list[str]:
    with pytest.raises(DataFileError) as caught:
        read(reader, text, **options)
    return str(caught.value).splitlines()


# DA -----------------------------------------------------------------------------------------


def test_da_rows_are_read_with_their_lines_and_optional_columns():
    text = (
        "item,system,annotator,criterion,score,hit,seconds\n"
        "7,Amazon_AI_(Shanghai),w1,correctness,93.5,h1,12.25\n"
        "\n"
        "8, WebNLG-2020-reference ,w1,fluency,100,,\n"
    )
    first, second = read(read_da, text)
    assert first == DaJudgment(
        0, "7", "Amazon_AI_(Shanghai)", "w1", "correctness", 93.5, "h1", 12.25
    )
    assert (first.line, second.line) == (2, 4)
    assert second.system == "WebNLG-2020-reference" and second.score == 100.0
    assert second.hit is None and second.seconds is None


def test_da_without_optional_columns_and_as_tsv():
    text = "item\tsystem\tannotator\tcriterion\tscore\n1\ts\ta\tc\t0\n"
    (judgment,) = read(read_da, text)
    assert (judgment.score, judgment.hit, judgment.seconds) == (0.0, None, None)


def test_da_bad_rows_are_collected_each_with_file_line_and_column():
    text = (
        "item,system,annotator,criterion,score,seconds\n"
        "1,s,a,c,101,\n"
        "2,s,a,c,nan,\n"
        "3,,a,c,50,\n"
        "4,s,a,c,50,-1\n"
        "5,s,a,c,1_0,\n"
        "6,s,a,c,50,\n"
    )
    assert errors_of(read_da, text) == [
        "f.csv, line 2, column score: 101.0 is outside 0 to 100",
        "f.csv, line 3, column score: 'nan' is not a number",
        "f.csv, line 4, column system: empty",
        "f.csv, line 5, column seconds: must be 0 or more",
        "f.csv, line 6, column score: '1_0' is not a number",
    ]


def test_da_errors_stop_at_the_limit_and_no_record_follows_the_first():
    text = "item,system,annotator,criterion,score\n1,s,a,c,5\n" + "1,s,a,c,x\n" * 10
    seen = []
    with pytest.raises(DataFileErrors) as caught:
        for judgment in read_da(lines(text), "f.csv", max_errors=3):
            seen.append(judgment.item)
    assert seen == ["1"]
    assert [error.line for error in caught.value.errors] == [3, 4, 5]
    assert caught.value.stopped and str(caught.value).endswith("(stopped after 3 errors)")


def test_da_missing_column_and_ragged_row_name_their_line():
    assert errors_of(read_da, "item,system,annotator,score\n") == [
        "f.csv, line 1: missing column(s): criterion"
    ]
    text = "item,system,annotator,criterion,score\n1,s,a,c,x\n1,s,a,c\n1,s,a,c,x\n"
    assert errors_of(read_da, text) == [
        "f.csv, line 2, column score: 'x' is not a number",
        "f.csv, line 3: 4 fields where the header has 5",
        "(stopped after 2 errors)",
    ]


def test_da_names_with_line_breaks_are_refused():
    text = 'item,system,annotator,criterion,score\n1,"s\nt",a,c,5\n'
    assert errors_of(read_da, text) == [
        "f.csv, line 2, column system: contains a line break or control character"
    ]


# Pairwise -----------------------------------------------------------------------------------


def test_pairwise_rows_and_winners():
    text = (
        "item,system_a,system_b,annotator,criterion,winner,hit\n"
        "g1,neural,human,w,coherence,A,p1\n"
        "g1,neural,human,w,grammaticality, tie ,\n"
    )
    first, second = read(read_pairwise, text)
    assert first == PairwiseJudgment(0, "g1", "neural", "human", "w", "coherence", "a", "p1")
    assert (second.winner, second.hit) == ("tie", None)


def test_pairwise_refuses_an_unknown_winner_and_a_system_against_itself():
    text = "item,system_a,system_b,annotator,criterion,winner\ng1,x,y,w,c,left\ng1,x,x,w,c,a\n"
    assert errors_of(read_pairwise, text) == [
        "f.csv, line 2, column winner: must be a, b or tie",
        "f.csv, line 3, column system_b: the same system on both sides",
    ]


# ESA ----------------------------------------------------------------------------------------


def test_esa_lines_with_spans():
    text = (
        '{"item": 12, "system": "s", "annotator": "w", "criterion": "quality", "score": 70,'
        ' "spans": [{"start": 0, "end": 4, "severity": "major"}], "extra": 1}\n'
        "\n"
        '{"item": "13", "system": "s", "annotator": 5, "criterion": "quality", "score": 99.5,'
        ' "spans": [], "hit": "h"}\n'
    )
    first, second = read(read_esa, text)
    assert first == EsaJudgment(0, "12", "s", "w", "quality", 70.0, (Span(0, 4, "major"),))
    assert (second.line, second.annotator, second.spans, second.hit) == (3, "5", (), "h")


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ('{"start": 3, "end": 3, "severity": "minor"}', "column spans[0].end: must be after start"),
        ('{"start": -1, "end": 3, "severity": "minor"}', "spans[0].start: must be a whole number"),
        ('{"start": 0, "end": 2.5, "severity": "minor"}', "spans[0].end: must be a whole number"),
        ('{"start": 0, "end": true, "severity": "minor"}', "spans[0].end: must be a whole number"),
        ('{"start": 0, "end": 2, "severity": "bad"}', "spans[0].severity: must be minor or major"),
        ('{"start": 0, "end": 2}', "spans[0].severity: missing field 'severity'"),
        ('"x"', "column spans[0]: must be an object"),
    ],
)
def test_esa_bad_spans_name_the_span(spans, message):
    text = (
        '{"item": 1, "system": "s", "annotator": "w", "criterion": "q", "score": 1,'
        f' "spans": [{{"start": 0, "end": 1, "severity": "minor"}}, {spans}]}}\n'
    )
    (error,) = errors_of(read_esa, text)
    assert error.startswith("f.csv, line 1, column ") and message.replace("[0]", "[1]") in error


def test_esa_bad_lines_are_collected_and_reading_goes_on_after_broken_json():
    good = '{"item": 1, "system": "s", "annotator": "w", "criterion": "q", "score": 1, "spans": []}'
    text = "\n".join(
        [
            good,
            "{not json",
            good.replace('"score": 1', '"score": 100.5'),
            good.replace('"system": "s"', '"system": 3'),
            good.replace(', "spans": []', ""),
            good.replace('"score": 1', '"score": "1"'),
        ]
    )
    errors = errors_of(read_esa, text)
    assert errors[0].startswith("f.csv, line 2: not JSON")
    assert errors[1:] == [
        "f.csv, line 3, column score: 100.5 is outside 0 to 100",
        "f.csv, line 4, column system: must be a string",
        "f.csv, line 5, column spans: missing field 'spans'",
        "f.csv, line 6, column score: must be a number",
    ]


def test_check_spans_names_the_line_and_the_span_past_the_text():
    judgment = EsaJudgment(9, "1", "s", "w", "q", 50.0, (Span(0, 3, "minor"), Span(2, 6, "major")))
    check_spans(judgment, "abcdef", "f.jsonl")  # ends at the last character: fine
    with pytest.raises(DataFileError) as caught:
        check_spans(judgment, "abcde", "f.jsonl")
    assert str(caught.value) == (
        "f.jsonl, line 9, column spans[1].end: ends at 6, past the end of the output (5 characters)"
    )


# Round trips --------------------------------------------------------------------------------

# Characters that matter to CSV quoting, formula guards, whitespace and Unicode.
NAME = st.text(alphabet="ab_()'=+-@ ,\";é😀", min_size=1, max_size=12).map(str.strip).filter(bool)
SCORE = st.floats(min_value=0.0, max_value=100.0)
OPTIONAL_NAME = st.none() | NAME


@st.composite
def da_judgments(draw):
    seconds = draw(st.none() | st.floats(min_value=0.0, max_value=1e9))
    names = [draw(NAME) for _ in range(4)]
    return DaJudgment(0, *names, draw(SCORE), draw(OPTIONAL_NAME), seconds)


@st.composite
def pairwise_judgments(draw):
    item, system_a, annotator, criterion = (draw(NAME) for _ in range(4))
    system_b = draw(NAME.filter(lambda name: name != system_a))
    winner = draw(st.sampled_from(["a", "b", "tie"]))
    return PairwiseJudgment(
        0, item, system_a, system_b, annotator, criterion, winner, draw(OPTIONAL_NAME)
    )


@st.composite
def esa_judgments(draw):
    spans = []
    for _ in range(draw(st.integers(0, 3))):
        start = draw(st.integers(0, 500))
        end = draw(st.integers(start + 1, 600))
        spans.append(Span(start, end, draw(st.sampled_from(["minor", "major"]))))
    names = [draw(NAME) for _ in range(4)]
    return EsaJudgment(0, *names, draw(SCORE), tuple(spans), draw(OPTIONAL_NAME))


def written(writer, judgments) -> str:
    out = io.StringIO(newline="")
    assert writer(judgments, out) == len(judgments)
    return out.getvalue()


@ROUND_TRIP
@given(st.lists(da_judgments(), max_size=8))
def test_da_round_trip_is_exact(judgments):
    assert read(read_da, written(write_da, judgments)) == judgments


@ROUND_TRIP
@given(st.lists(pairwise_judgments(), max_size=8))
def test_pairwise_round_trip_is_exact(judgments):
    assert read(read_pairwise, written(write_pairwise, judgments)) == judgments


@ROUND_TRIP
@given(st.lists(esa_judgments(), max_size=8))
def test_esa_round_trip_is_exact(judgments):
    assert read(read_esa, written(write_esa, judgments)) == judgments


def test_written_scores_are_exact_floats_and_text_cells_spreadsheet_safe():
    judgment = DaJudgment(0, "1", "-cmd|' /C calc'!A0", "@w", "=c", 0.1 + 0.2, None, 1e-7)
    text = written(write_da, [judgment])
    assert text.splitlines()[1] == "1,'-cmd|' /C calc'!A0,'@w,'=c,0.30000000000000004,,1e-07"
    assert read(read_da, text) == [judgment]


@given(st.text(alphabet="'=a+ ", max_size=8))
def test_guard_and_unguard_are_inverses_and_guard_leaves_no_formula(value):
    assert unguard(guard(value)) == value
    assert not guard(value).startswith(("=", "+", "-", "@", "\t", "\r"))


def test_unguard_reads_what_csvsafe_wrote():
    assert unguard("'=1+1") == "=1+1" and unguard("'quoted") == "'quoted"


def test_readers_and_writers_by_form():
    assert list(READERS) == list(WRITERS) == ["da", "pairwise", "esa"]
    judgment = PairwiseJudgment(0, "1", "x", "y", "w", "c", "b")
    assert read(READERS["pairwise"], written(WRITERS["pairwise"], [judgment])) == [judgment]
