import csv
import io
import json

import pytest
from django.core.management import call_command
from django.db import connection
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from annotation.datafiles import importers, ratings_import
from annotation.datafiles.importers import import_items, import_outputs
from annotation.datafiles.ratings_import import import_ratings
from annotation.models import Annotator, Assignment, DataFile, Hit, Item, Judgment, Output, System
from nlgdata.datafiles import DataFileError
from tests.annotation.sample_inputs import INPUTS
from tests.factories import make_campaign, make_system

pytestmark = pytest.mark.django_db

E2E_ITEMS = (
    "mr,ref\n"
    '"name[The Vaults], eatType[pub], near[Café Adriatic]","The Vaults is near Café Adriatic."\n'
    '"name[The Vaults], eatType[pub], near[Café Adriatic]","Near Café Adriatic: The Vaults pub."\n'
    '"name[Loch Fyne], eatType[restaurant], food[French]","Loch Fyne is a French restaurant."\n'
)
E2E_OUTPUTS = (
    "MR\toutput\n"
    '"name[The Vaults], eatType[pub], near[Café Adriatic]"\tThe Vaults is a pub.\n'
    '"name[Loch Fyne], eatType[restaurant], food[French]"\tLoch Fyne serves French food.\n'
)
RATINGS_HEADER = (
    "_id,_worker_id,_started_at,_created_at,mr,mr_id,"
    "sys1,sys2,sys3,ref1,ref2,ref3,quality1,quality2,quality3,check1,check2,check3\n"
)
RATINGS_ROW = (
    '{id},w1,11/28/2017 14:42:14,11/28/2017 14:51:43,"name[The Vaults], eatType[pub]",1,'
    "alpha,beta,gamma,The Vaults is a pub.,A pub: The Vaults.,Vaults pub,"
    '{q1},80,50,ok,missing,"added\nmissing"\n'
)


def ratings_file(*rows: str) -> bytes:
    return (RATINGS_HEADER + "".join(rows)).encode()


def count_rows() -> dict:
    models = [Item, System, Output, Hit, Assignment, Judgment, Annotator, DataFile]
    return {model.__name__: model.objects.count() for model in models}


def assert_nothing_written(before: dict) -> None:
    assert count_rows() == before


def test_import_items_e2e_csv_collapses_references():
    campaign = make_campaign()
    summary = import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    items = list(campaign.items.order_by("external_id"))
    assert summary.created == {"items": 2}
    assert [i.external_id for i in items] == ["1", "2"]
    assert items[0].input_data["attributes"][2] == ["near", "Café Adriatic"]
    assert len(items[0].references) == 2
    assert DataFile.objects.get(campaign=campaign).kind == "items"


def test_import_items_json_lines_of_every_kind():
    campaign = make_campaign()
    lines = [
        {
            "id": "t1",
            "kind": "table",
            "input": {
                "title": "T",
                "header": ["a", "b"],
                "rows": [["1", "2"]],
                "highlighted": [[0, 1]],
            },
        },
        {
            "id": "x1",
            "kind": "triples",
            "input": {"triples": [["Alan_Bean", "occupation", "pilot"]]},
        },
        {
            "id": "d1",
            "kind": "document",
            "input": {"text": "Ada was born in 1815.", "question": "date of birth"},
        },
        {"id": "m1", "kind": "mr", "input": {"attributes": [["name", "X"]]}, "references": ["X."]},
        {
            "id": "b1",
            "kind": "boxscore",
            "input": {
                "home": {"city": "Boston", "name": "Celtics"},
                "visitor": {"city": "Miami", "name": "Heat"},
                "players": [{"name": "A B", "team": "home", "stats": {"PTS": 3}}],
            },
        },
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    import_items(campaign, io.BytesIO(data), "items.jsonl")
    kinds = dict(campaign.items.values_list("external_id", "input_kind"))
    assert kinds == {"t1": "table", "x1": "triples", "d1": "document", "m1": "mr", "b1": "boxscore"}


def test_import_items_repeat_of_same_file_is_refused():
    campaign = make_campaign()
    import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    before = count_rows()
    with pytest.raises(DataFileError, match="already imported"):
        import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "again.csv")
    assert_nothing_written(before)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "items.csv: the file is empty"),
        (b"ref\nhello\n", "items.csv, line 1: missing column(s): mr"),
        ("mr,ref\nname[Caf\xe9]\n".encode("latin-1"), "items.csv, line 2: not UTF-8"),
        (
            b'mr,ref\n"name[A], eatType[pub]",x\n"name[B] eatType",y\n',
            "items.csv, line 3, column mr",
        ),
        (b'mr,ref\n"name[A]",x,extra\n', "items.csv, line 2: 3 fields where the header has 2"),
    ],
    ids=["empty", "missing-column", "encoding", "bad-mr", "extra-field"],
)
def test_import_items_malformed_names_place_and_writes_nothing(data, message):
    campaign = make_campaign()
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_items(campaign, io.BytesIO(data), "items.csv")
    assert str(error.value).startswith(message)
    assert_nothing_written(before)


def test_import_items_json_lines_bad_input_names_line_and_field():
    campaign = make_campaign()
    data = (
        b'{"id": "1", "kind": "mr", "input": {"attributes": [["name", "A"]]}}\n'
        b'{"id": "2", "kind": "table", "input": {"header": ["a"], "rows": [["1", "2"]]}}\n'
    )
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_items(campaign, io.BytesIO(data), "items.jsonl")
    assert str(error.value) == "items.jsonl, line 2, column input: table: row 1 must have 1 cells"
    assert_nothing_written(before)


def test_import_outputs_matches_items_by_mr():
    campaign = make_campaign()
    import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    system = make_system(campaign, name="tgen")
    summary = import_outputs(campaign, system, io.BytesIO(E2E_OUTPUTS.encode()), "tgen.tsv")
    assert summary.created == {"outputs": 2}
    texts = dict(system.outputs.values_list("item__external_id", "text"))
    assert texts == {"1": "The Vaults is a pub.", "2": "Loch Fyne serves French food."}


def test_import_outputs_reads_quirks_of_published_files():
    """BOM, CR CR LF line ends and single-quoted fields, as in some E2E submissions."""
    campaign = make_campaign()
    import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    system = make_system(campaign, name="tnt1")
    data = (
        "\ufeffMR\toutput\r\r\n"
        "'name[The Vaults], eatType[pub], near[Café Adriatic]'\t'The Vaults is a pub.'\r\r\n"
    )
    import_outputs(campaign, system, io.BytesIO(data.encode()), "tnt1.tsv")
    assert system.outputs.get().text == "The Vaults is a pub."


def test_import_outputs_unknown_mr_writes_nothing():
    campaign = make_campaign()
    import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    system = make_system(campaign, name="tgen")
    data = E2E_OUTPUTS + '"name[Nowhere], eatType[pub]"\tNowhere is a pub.\n'
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_outputs(campaign, system, io.BytesIO(data.encode()), "tgen.tsv")
    assert str(error.value) == "tgen.tsv, line 4, column MR: no item of the campaign has this MR"
    assert_nothing_written(before)


def test_import_outputs_second_output_for_an_item_is_refused():
    campaign = make_campaign()
    import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    system = make_system(campaign, name="tgen")
    import_outputs(campaign, system, io.BytesIO(E2E_OUTPUTS.encode()), "tgen.tsv")
    other = E2E_OUTPUTS.replace("is a pub", "is a nice pub").encode()
    before = count_rows()
    with pytest.raises(DataFileError, match="already has an output"):
        import_outputs(campaign, system, io.BytesIO(other), "tgen-v2.tsv")
    assert_nothing_written(before)


def test_import_outputs_keeps_an_empty_output_and_counts_it(tmp_path):
    """A system that produced no text for an item (WebNLG 2020's FORGE2017 on sample 533)
    has an empty output: stored as such, by the command too, and counted in the summary."""
    campaign = make_campaign(slug="empty-out")
    import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    system = make_system(campaign, name="forge")
    data = E2E_OUTPUTS.replace("Loch Fyne serves French food.", "")
    summary = import_outputs(campaign, system, io.BytesIO(data.encode()), "forge.tsv")
    assert summary.created == {"outputs": 2, "of them empty": 1}
    assert "created 2 outputs, 1 of them empty" in str(summary)
    assert dict(system.outputs.values_list("item__external_id", "text")) == {
        "1": "The Vaults is a pub.",
        "2": "",
    }
    other = make_system(campaign, name="llm")
    path = tmp_path / "llm.jsonl"
    path.write_text('{"item": "1", "text": "  "}\n{"item": "2", "text": "A pub."}\n')
    out = io.StringIO()
    call_command("import_outputs", "empty-out", "llm", str(path), stdout=out)
    assert "1 of them empty" in out.getvalue()
    assert list(other.outputs.empty().values_list("item__external_id", flat=True)) == ["1"]


def test_import_outputs_json_lines_and_size_limit(settings):
    campaign = make_campaign()
    import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    system = make_system(campaign, name="llm")
    settings.MAX_OUTPUT_CHARS = 10
    data = b'{"item": "1", "text": "short"}\n{"item": "2", "text": "far too long a text"}\n'
    with pytest.raises(DataFileError) as error:
        import_outputs(campaign, system, io.BytesIO(data), "llm.jsonl")
    assert str(error.value) == "llm.jsonl, line 2, column text: 19 characters; the limit is 10"
    assert system.outputs.count() == 0


def test_import_ratings_creates_everything_for_a_page():
    campaign = make_campaign()
    summary = import_ratings(
        campaign, io.BytesIO(ratings_file(RATINGS_ROW.format(id=7, q1=100))), "q.csv"
    )
    assert summary.created["HITs"] == 1 and summary.created["judgments"] == 3
    hit = Hit.objects.get(campaign=campaign)
    assert (hit.criterion.name, hit.external_id, hit.item.external_id) == ("quality", "7", "1")
    assignment = hit.assignments.get()
    assert assignment.status == "submitted" and assignment.seconds_taken == 569
    judgments = list(Judgment.objects.filter(assignment=assignment).order_by("slot__position"))
    assert [j.slot.output.system.name for j in judgments] == ["alpha", "beta", "gamma"]
    assert [j.score for j in judgments] == [100, 80, 50]
    coverage = [(j.adds_information, j.misses_information, j.reflects_perfectly) for j in judgments]
    assert coverage == [(False, False, True), (False, True, False), (True, True, False)]
    assert Annotator.objects.get(campaign=campaign).source == "crowdflower"


def test_import_ratings_records_a_judgments_change_of_its_criterion():
    campaign = make_campaign()
    import_ratings(campaign, io.BytesIO(ratings_file(RATINGS_ROW.format(id=7, q1=100))), "q.csv")
    versions = dict(campaign.criteria.values_list("name", "judgments_version"))
    assert versions == {"quality": 1, "naturalness": 0}


@pytest.mark.postgres  # PostgreSQL's planner statistics
def test_import_ratings_brings_the_planner_statistics_up_to_date():
    campaign = make_campaign()
    rows = [RATINGS_ROW.format(id=n, q1=100) for n in range(1, 41)]
    import_ratings(campaign, io.BytesIO(ratings_file(*rows)), "q.csv")
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'annotation_judgment'")
        (judgments,) = cursor.fetchone()
    # Before autovacuum: -1 (never analysed) or the size at the last analysis.
    assert judgments == Judgment.objects.count() == 120


def test_import_ratings_refused_records_no_change():
    campaign = make_campaign()
    with pytest.raises(DataFileError, match="line 2, column quality1: 'x' is not a number"):
        import_ratings(
            campaign, io.BytesIO(ratings_file(RATINGS_ROW.format(id=7, q1="x"))), "q.csv"
        )
    assert set(campaign.criteria.values_list("judgments_version", flat=True)) == {0}


@pytest.mark.parametrize(
    ("q1", "message"),
    [
        ("abc", "'abc' is not a number"),
        ("0", "'0': scores must be positive"),
        ("-5", "'-5': scores must be positive"),
    ],
)
def test_import_ratings_bad_score_names_line_and_column(q1, message):
    campaign = make_campaign()
    data = ratings_file(RATINGS_ROW.format(id=1, q1=100), RATINGS_ROW.format(id=2, q1=q1))
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_ratings(campaign, io.BytesIO(data), "q.csv")
    assert str(error.value).startswith(f"q.csv, line 4, column quality1: {message}")
    assert_nothing_written(before)


def test_import_ratings_flags_scores_off_the_scale_and_stores_them_as_given():
    """RankME's scores above 1,000 (ten times the standard) are slips such as E2E's
    111,111: the summary counts them per annotator, the judgments keep them."""
    campaign = make_campaign()
    rows = [
        RATINGS_ROW.format(id=1, q1=111111).replace(",w1,", ",w7,"),
        RATINGS_ROW.format(id=2, q1=1000),  # ten times the standard: on the scale
        RATINGS_ROW.format(id=3, q1=1001),
        RATINGS_ROW.format(id=4, q1=5656).replace(",80,", ",2000,"),
    ]
    summary = import_ratings(campaign, io.BytesIO(ratings_file(*rows)), "q.csv")
    note = (
        "4 scores off the scale (above 1,000, ten times the standard's 100), stored as"
        " given, by annotators w1 (3), w7 (1); the campaign's monitor lists them."
    )
    assert str(summary) == (
        "q.csv: 4 rows read; created 1 items, 3 systems, 3 outputs, 2 annotators, 4 HITs,"
        f" 12 judgments. {note}"
    )
    stored = Judgment.objects.filter(assignment__hit__campaign=campaign)
    firsts = stored.filter(slot__position=1).order_by("assignment__hit__external_id")
    assert list(firsts.values_list("score", flat=True)) == [111111, 1000, 1001, 5656]
    assert stored.filter(score__gt=1000).count() == 4
    assert DataFile.objects.get(campaign=campaign).summary == str(summary)


def test_import_ratings_without_scores_off_the_scale_says_nothing_of_them():
    campaign = make_campaign()
    summary = import_ratings(
        campaign, io.BytesIO(ratings_file(RATINGS_ROW.format(id=1, q1=999))), "q.csv"
    )
    assert summary.note == "" and "off the scale" not in str(summary)


def test_import_ratings_missing_column_writes_nothing():
    campaign = make_campaign()
    data = ratings_file(RATINGS_ROW.format(id=1, q1=100)).replace(b"_worker_id", b"worker")
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_ratings(campaign, io.BytesIO(data), "q.csv")
    assert str(error.value) == "q.csv, line 1: missing column(s): _worker_id"
    assert_nothing_written(before)


def test_import_ratings_unknown_system_name_is_refused():
    campaign = make_campaign()
    # Any printable name is a system's (papers name theirs Amazon_AI_(Shanghai)); not one
    # with a control character.
    row = RATINGS_ROW.format(id=1, q1=100).replace("alpha,", "not a\bsystem,")
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_ratings(campaign, io.BytesIO(ratings_file(row)), "q.csv")
    assert str(error.value) == (
        "q.csv, line 2, column sys1: 'not a\\x08system' is not a system name: No control"
        " characters (tabs, line breaks) in a system's name."
    )
    assert_nothing_written(before)


def test_import_ratings_output_differing_from_stored_one_is_refused():
    campaign = make_campaign()
    import_ratings(campaign, io.BytesIO(ratings_file(RATINGS_ROW.format(id=1, q1=100))), "a.csv")
    row = RATINGS_ROW.format(id=2, q1=90).replace("Vaults pub,", "Vaults pub indeed,")
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_ratings(campaign, io.BytesIO(ratings_file(row)), "b.csv")
    assert str(error.value).startswith("b.csv, line 2, column ref3: differs from the output")
    assert_nothing_written(before)


def test_import_ratings_overlapping_file_is_refused():
    campaign = make_campaign()
    import_ratings(campaign, io.BytesIO(ratings_file(RATINGS_ROW.format(id=1, q1=100))), "a.csv")
    data = ratings_file(RATINGS_ROW.format(id=2, q1=90), RATINGS_ROW.format(id=1, q1=100))
    before = count_rows()
    with pytest.raises(DataFileError, match="line 4, column _id: HIT 1 of worker w1 is already in"):
        import_ratings(campaign, io.BytesIO(data), "b.csv")
    assert_nothing_written(before)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "q.csv: the file is empty"),
        (b"\xff\xfe\x00\x00", "q.csv, line 1: not UTF-8"),
        (RATINGS_HEADER.encode(), "q.csv: no rows after the header"),
    ],
    ids=["empty", "encoding", "header-only"],
)
def test_import_ratings_unreadable_files_write_nothing(data, message):
    campaign = make_campaign()
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_ratings(campaign, io.BytesIO(data), "q.csv")
    assert str(error.value).startswith(message)
    assert_nothing_written(before)


def test_import_ratings_naturalness_columns_make_naturalness_hits():
    campaign = make_campaign()
    data = ratings_file(RATINGS_ROW.format(id=1, q1=100)).replace(b"quality", b"natur")
    summary = import_ratings(campaign, io.BytesIO(data), "natur.csv")
    assert summary.created["judgments"] == 3
    assert Hit.objects.get(campaign=campaign).criterion.name == "naturalness"


def test_import_ratings_with_both_criteria_needs_a_choice():
    campaign = make_campaign()
    header = RATINGS_HEADER.replace("\n", ",natur1,natur2,natur3\n")
    row = RATINGS_ROW.format(id=1, q1=100).rstrip("\n") + ",90,90,90\n"
    data = (header + row).encode()
    with pytest.raises(DataFileError, match="needs exactly one of quality1.. or natur1.."):
        import_ratings(campaign, io.BytesIO(data), "both.csv")
    assert not Hit.objects.exists()
    import_ratings(campaign, io.BytesIO(data), "both.csv", criterion="naturalness")
    judgments = Judgment.objects.filter(assignment__hit__criterion__name="naturalness")
    assert sorted(judgments.values_list("score", flat=True)) == [90, 90, 90]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "tgen.tsv: the file is empty"),
        (b'MR\ttext\n"name[The Vaults]"\tHi.\n', "tgen.tsv, line 1: missing column(s): output"),
        (b'MR\toutput\n"name[Caf\xe9]"\tHi.\n', "tgen.tsv, line 2: not UTF-8"),
        (b"MR\toutput\n", "tgen.tsv: no outputs in the file"),
    ],
    ids=["empty", "missing-column", "encoding", "header-only"],
)
def test_import_outputs_malformed_names_place_and_writes_nothing(data, message):
    campaign = make_campaign()
    import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    system = make_system(campaign, name="tgen")
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_outputs(campaign, system, io.BytesIO(data), "tgen.tsv")
    assert str(error.value).startswith(message)
    assert_nothing_written(before)


def test_import_ratings_overlong_worker_id_is_refused():
    campaign = make_campaign()
    row = RATINGS_ROW.format(id=1, q1=100).replace(",w1,", "," + "w" * 201 + ",")
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_ratings(campaign, io.BytesIO(ratings_file(row)), "q.csv")
    assert str(error.value) == "q.csv, line 2, column _worker_id: longer than 200 characters"
    assert_nothing_written(before)


# Hostile input: each refused with file, line and field, and nothing written ---------------

GOOD_ITEM = '{"id": "m1", "kind": "mr", "input": {"attributes": [["name", "A"]]}}'
DOCUMENT = '{{"id": "2", "kind": "document", "input": {{"text": {text}, "question": "q"{more}}}}}'
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"id": "2", "kind": ["mr"], "input": {"attributes": [["name", "B"]]}}',
            "items.jsonl, line 2, column kind: unknown input kind ['mr']; expected one of mr,",
        ),
        (
            '{"id": "2", "kind": "table", "input": '
            '{"header": ["a"], "rows": [["1"]], "highlighted": [["x", 0]]}}',
            "items.jsonl, line 2, column input: table: highlighted cells must be [row, column] "
            "pairs of whole numbers",
        ),
        (
            DOCUMENT.format(text='"t"', more=', "year": NaN'),
            "items.jsonl, line 2, column input.year: NaN is not a number JSON allows",
        ),
        (
            DOCUMENT.format(text='"t"', more=', "year": [Infinity]'),
            "items.jsonl, line 2, column input.year[0]: Infinity is not a number JSON allows",
        ),
        (
            DOCUMENT.format(text='"a\\u0000b"', more=""),
            "items.jsonl, line 2, column input.text: contains a NUL character (\\u0000)",
        ),
        (
            DOCUMENT.format(text='"\\ud800"', more=""),
            "items.jsonl, line 2, column input.text: contains a lone surrogate (\\ud800); "
            "not Unicode text",
        ),
        (
            '{"id": "2", "kind": "table", "input": ' + DEEP + "}",
            "items.jsonl, line 2, column input: nested deeper than 32 levels",
        ),
        (DEEP, "items.jsonl, line 2: nested deeper than 32 levels"),
        (
            DOCUMENT.format(text='"t"', more=', "n": 1' + "0" * 5000),
            "items.jsonl, line 2, column input.n: 100000000000… is a number of more than 18",
        ),
    ],
    ids=[
        "kind-list",
        "highlight-text",
        "nan",
        "infinity",
        "nul",
        "surrogate",
        "deep",
        "deep-line",
        "long-int",
    ],
)
def test_import_items_hostile_json_lines_are_refused_and_write_nothing(line, message):
    campaign = make_campaign()
    before = count_rows()
    data = f"{GOOD_ITEM}\n{line}\n".encode()
    with pytest.raises(DataFileError) as error:
        import_items(campaign, io.BytesIO(data), "items.jsonl")
    assert str(error.value).startswith(message)
    assert_nothing_written(before)


def test_import_items_nul_byte_in_csv_names_its_line():
    campaign = make_campaign()
    before = count_rows()
    data = E2E_ITEMS.encode() + b'"name[X]","a\x00b"\n'
    with pytest.raises(DataFileError) as error:
        import_items(campaign, io.BytesIO(data), "items.csv")
    assert str(error.value) == "items.csv, line 5: the file contains NUL bytes; is it binary?"
    assert_nothing_written(before)


def test_import_items_size_limit_holds_while_reading(settings):
    settings.IMPORT_MAX_BYTES = 100
    campaign = make_campaign()
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_items(campaign, io.BytesIO(E2E_ITEMS.encode() * 2), "items.csv")
    assert str(error.value) == "items.csv: the file is over the limit of 100 bytes"
    assert_nothing_written(before)


# Batches: rows are written as they are read, in one transaction --------------------------


@pytest.fixture
def small_batches(monkeypatch):
    for module in (importers, ratings_import):
        monkeypatch.setattr(module, "BATCH_ROWS", 2)


def item_lines(count: int) -> list[str]:
    return [
        json.dumps({"id": f"i{n}", "kind": "mr", "input": {"attributes": [["name", f"P{n}"]]}})
        for n in range(count)
    ]


def test_import_items_bad_row_after_written_batches_writes_nothing(small_batches):
    campaign = make_campaign()
    before = count_rows()
    data = "\n".join([*item_lines(5), '{"id": "i9", "kind": "mr"}']).encode()
    with pytest.raises(DataFileError, match="items.jsonl, line 6, column input: missing field"):
        import_items(campaign, io.BytesIO(data), "items.jsonl")
    assert_nothing_written(before)
    summary = import_items(campaign, io.BytesIO("\n".join(item_lines(5)).encode()), "ok.jsonl")
    assert (summary.rows, campaign.items.count()) == (5, 5)


def test_import_items_mr_met_again_in_a_later_batch_gets_its_references(small_batches):
    campaign = make_campaign()
    rows = ["mr,ref", "name[A],a1", "name[B],b1", "name[C],c1", "name[D],d1", "name[A],a2"]
    summary = import_items(campaign, io.BytesIO("\n".join(rows).encode()), "items.csv")
    assert (summary.rows, summary.created) == (5, {"items": 4})
    assert campaign.items.get(external_id="1").references == ["a1", "a2"]


def test_import_outputs_bad_row_in_a_later_batch_writes_nothing(small_batches):
    campaign = make_campaign()
    import_items(campaign, io.BytesIO("\n".join(item_lines(4)).encode()), "items.jsonl")
    system = make_system(campaign, name="llm")
    lines = [json.dumps({"item": f"i{n}", "text": f"Text {n}."}) for n in range(4)]
    before = count_rows()
    data = "\n".join([*lines, '{"item": "i9", "text": "x"}']).encode()
    with pytest.raises(DataFileError) as error:
        import_outputs(campaign, system, io.BytesIO(data), "llm.jsonl")
    assert str(error.value) == "llm.jsonl, line 5, column item: no item with id 'i9'"
    assert_nothing_written(before)


def test_import_ratings_in_batches_gives_what_one_batch_gives(small_batches):
    campaign = make_campaign()
    rows = [RATINGS_ROW.format(id=n, q1=100 + n) for n in range(1, 6)]
    summary = import_ratings(campaign, io.BytesIO(ratings_file(*rows)), "q.csv")
    assert summary.created == {
        "items": 1,
        "systems": 3,
        "outputs": 3,
        "annotators": 1,
        "HITs": 5,
        "judgments": 15,
    }
    scores = Judgment.objects.filter(slot__position=1).values_list("score", flat=True)
    assert sorted(scores) == [101, 102, 103, 104, 105]


def test_import_ratings_text_differing_from_an_earlier_batch_writes_nothing(small_batches):
    campaign = make_campaign()
    rows = [RATINGS_ROW.format(id=n, q1=100) for n in range(1, 4)]
    # Each row takes two lines (a quoted line break in check3): the fourth starts on line 8.
    rows.append(RATINGS_ROW.format(id=4, q1=90).replace("Vaults pub,", "Vaults pub indeed,"))
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_ratings(campaign, io.BytesIO(ratings_file(*rows)), "q.csv")
    assert str(error.value).startswith("q.csv, line 8, column ref3: differs from the output")
    assert_nothing_written(before)


# Fuzzing: anything gives an import or a located DataFileError, and a refusal writes nothing -

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# Errors about the file as a whole; every other error names a line.
WHOLE_FILE = (
    "the file is empty",
    "the file is over the limit",
    "this file was already imported",
    "no items in the file",
    "no outputs in the file",
    "no rows after the header",
)
TEXT = st.text(alphabet=st.sampled_from("aZ0 ,;\t\"'[]{}\\\r\n\x00\ud800é-=") | st.characters())
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**25), max_value=10**25)
    | st.floats()
    | TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=10,
)
LINE_ENDS = st.sampled_from(["\n", "\r\n", "\r\r\n"])


def encoded(lines: list[str], end: str, bom: bool) -> bytes:
    # surrogatepass: a lone surrogate written raw is bytes that are not UTF-8.
    return (("\ufeff" if bom else "") + end.join(lines)).encode("utf-8", "surrogatepass")


def json_line(value, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


def csv_lines(rows: list[list[str]], delimiter: str) -> list[str]:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return out.getvalue().split("\n")


def imports_or_refuses(run, file_name: str) -> None:
    before = count_rows()
    try:
        summary = run()
    except DataFileError as error:
        event(f"refused: {error.message[:25]}")  # see --hypothesis-show-statistics
        assert error.file_name == file_name
        assert error.line is not None or error.message.startswith(WHOLE_FILE), str(error)
        assert_nothing_written(before)
    else:
        event("imported")
        assert summary.rows > 0 and count_rows() != before


def mutated(value, data, new_leaf):
    """`value` with one place somewhere inside it (or itself) replaced by a drawn value."""
    if isinstance(value, dict | list) and value and data.draw(st.booleans()):
        keys = list(value) if isinstance(value, dict) else list(range(len(value)))
        key = data.draw(st.sampled_from(keys))
        copy = dict(value) if isinstance(value, dict) else list(value)
        copy[key] = mutated(value[key], data, new_leaf)
        return copy
    return data.draw(new_leaf)


def item_line(data, number: int) -> dict:
    """A valid item of some kind, sometimes changed at one place."""
    kind = data.draw(st.sampled_from(list(INPUTS)))
    value = {"id": f"i{number}", "kind": kind, "input": INPUTS[kind][0], "references": ["R."]}
    if data.draw(st.booleans()):
        value = mutated(value, data, JSON_VALUES)
    return value


@FUZZ
@given(st.data(), st.integers(1, 3), st.booleans(), LINE_ENDS, st.booleans())
def test_import_items_json_lines_fuzz(data, count, ascii_only, end, bom):
    values = [item_line(data, n) for n in range(count)]
    lines = [json_line(v, ascii_only) for v in values]
    if data.draw(st.booleans()):
        lines.insert(data.draw(st.integers(0, count)), data.draw(TEXT))
    campaign = make_campaign()
    file = encoded(lines, end, bom)
    imports_or_refuses(lambda: import_items(campaign, io.BytesIO(file), "f.jsonl"), "f.jsonl")


MR_TEXT = st.lists(
    st.tuples(st.sampled_from(["name", "eatType", "near"]), st.text("ab ]'", max_size=4)),
    min_size=1,
    max_size=3,
).map(lambda pairs: ", ".join(f"{n}[{v}]" for n, v in pairs))
CSV_ROW = st.tuples(MR_TEXT, st.text("ab .-=", max_size=8)).map(list) | st.lists(
    MR_TEXT | TEXT, min_size=1, max_size=3
)


@FUZZ
@given(
    st.lists(CSV_ROW, min_size=1, max_size=4),
    st.sampled_from([",", "\t"]),
    LINE_ENDS,
    st.booleans(),
)
def test_import_items_e2e_csv_fuzz(rows, delimiter, end, bom):
    campaign = make_campaign()
    data = encoded(csv_lines([["mr", "ref"], *rows], delimiter), end, bom)
    imports_or_refuses(lambda: import_items(campaign, io.BytesIO(data), "f.csv"), "f.csv")


OUTPUT_MRS = st.sampled_from(
    [
        "name[The Vaults], eatType[pub], near[Café Adriatic]",
        "'name[Loch Fyne], eatType[restaurant], food[French]'",
    ]
)


@FUZZ
@given(
    st.lists(
        st.tuples(OUTPUT_MRS, TEXT).map(list) | st.lists(OUTPUT_MRS | TEXT, max_size=3),
        min_size=1,
        max_size=3,
    ),
    st.lists(
        st.fixed_dictionaries({"item": st.sampled_from(["1", "2", 2]) | JSON_VALUES, "text": TEXT})
        | JSON_VALUES,
        min_size=1,
        max_size=3,
    ),
    st.booleans(),
    LINE_ENDS,
)
def test_import_outputs_fuzz(rows, values, as_json, end):
    campaign = make_campaign()
    import_items(campaign, io.BytesIO(E2E_ITEMS.encode()), "items.csv")
    system = make_system(campaign)
    if as_json:
        name, data = "f.jsonl", encoded([json_line(v, False) for v in values], end, False)
    else:
        name, data = "f.tsv", encoded(csv_lines([["MR", "output"], *rows], "\t"), end, False)
    imports_or_refuses(lambda: import_outputs(campaign, system, io.BytesIO(data), name), name)


RATINGS_COLUMNS = RATINGS_HEADER.strip().split(",")
RATINGS_VALUES = next(csv.reader(io.StringIO(RATINGS_ROW.format(id=1, q1=100))))


HOSTILE_CELLS = st.sampled_from(["", "0", "1e999", "nan", "-", "=1+1", "x" * 300]) | TEXT


def ratings_row(number: int):
    """A valid page, sometimes with a cell or two replaced by something else."""
    changes = st.lists(
        st.tuples(st.integers(0, len(RATINGS_VALUES) - 1), HOSTILE_CELLS), max_size=2
    )

    def apply(changes: list) -> list[str]:
        row = [str(number), *RATINGS_VALUES[1:]]
        for column, value in changes:
            row[column] = value
        return row

    return changes.map(apply)


@FUZZ
@given(st.data(), st.integers(1, 3), LINE_ENDS)
def test_import_ratings_fuzz(data, count, end):
    rows = [data.draw(ratings_row(n)) for n in range(count)]
    campaign = make_campaign()
    file = encoded(csv_lines([RATINGS_COLUMNS, *rows], ","), end, False)
    imports_or_refuses(lambda: import_ratings(campaign, io.BytesIO(file), "q.csv"), "q.csv")


@FUZZ
@given(st.binary(max_size=200), st.sampled_from(["f.csv", "f.jsonl", "f.tsv"]))
def test_importers_take_any_bytes(data, name):
    campaign = make_campaign()
    system = make_system(campaign)
    imports_or_refuses(lambda: import_items(campaign, io.BytesIO(data), name), name)
    imports_or_refuses(lambda: import_outputs(campaign, system, io.BytesIO(data), name), name)
    imports_or_refuses(lambda: import_ratings(campaign, io.BytesIO(data), name), name)


def test_import_items_long_document_is_stored_and_its_repeat_refused():
    """The uniqueness of an item's input rests on a digest: a key of 20,000 characters is
    past what PostgreSQL can index as it is."""
    campaign = make_campaign()
    text = "word " * 4_000
    line = json.dumps({"id": "d1", "kind": "document", "input": {"text": text, "question": "Q?"}})
    import_items(campaign, io.BytesIO(line.encode() + b"\n"), "docs.jsonl")
    assert len(campaign.items.get().input_key) > 20_000
    again = line.replace('"d1"', '"d2"')
    with pytest.raises(DataFileError, match="line 1: this input is already an item"):
        import_items(campaign, io.BytesIO(again.encode() + b"\n"), "more-docs.jsonl")
    assert campaign.items.count() == 1


def test_import_ratings_into_a_running_campaign_brings_new_systems_switched_off():
    campaign = make_campaign()  # open to annotators
    make_system(campaign, name="alpha")
    summary = import_ratings(
        campaign, io.BytesIO(ratings_file(RATINGS_ROW.format(id=7, q1=100))), "q.csv"
    )
    active = dict(campaign.systems.values_list("name", "is_active"))
    assert active == {"alpha": True, "beta": False, "gamma": False}
    assert "The 2 new systems were imported switched off" in str(summary)


@pytest.mark.parametrize("status", ["draft", "open"])
def test_import_ratings_into_a_campaign_without_systems_brings_them_switched_on(status):
    campaign = make_campaign(status=status)
    summary = import_ratings(
        campaign, io.BytesIO(ratings_file(RATINGS_ROW.format(id=7, q1=100))), "q.csv"
    )
    assert set(campaign.systems.values_list("is_active", flat=True)) == {True}
    assert "switched off" not in str(summary)
