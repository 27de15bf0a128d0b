import io
import json

import pytest

from annotation.datafiles import DataFileError
from annotation.importers import import_items, import_outputs
from annotation.models import Annotator, Assignment, DataFile, Hit, Item, Judgment, Output, System
from annotation.ratings_import import import_ratings
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
    assert (hit.criterion, hit.external_id, hit.item.external_id) == ("quality", "7", "1")
    assignment = hit.assignments.get()
    assert assignment.status == "submitted" and assignment.seconds_taken == 569
    judgments = list(Judgment.objects.filter(assignment=assignment).order_by("slot__position"))
    assert [j.slot.output.system.name for j in judgments] == ["alpha", "beta", "gamma"]
    assert [j.score for j in judgments] == [100, 80, 50]
    coverage = [(j.adds_information, j.misses_information, j.reflects_perfectly) for j in judgments]
    assert coverage == [(False, False, True), (False, True, False), (True, True, False)]
    assert Annotator.objects.get(campaign=campaign).source == "crowdflower"


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
    row = RATINGS_ROW.format(id=1, q1=100).replace("alpha,", "not a system!,")
    before = count_rows()
    with pytest.raises(DataFileError) as error:
        import_ratings(campaign, io.BytesIO(ratings_file(row)), "q.csv")
    assert str(error.value) == "q.csv, line 2, column sys1: 'not a system!' is not a system name"
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
    with pytest.raises(DataFileError, match="line 4, column _id: HIT 1 is already in"):
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
    assert Hit.objects.get(campaign=campaign).criterion == "naturalness"


def test_import_ratings_with_both_criteria_needs_a_choice():
    campaign = make_campaign()
    header = RATINGS_HEADER.replace("\n", ",natur1,natur2,natur3\n")
    row = RATINGS_ROW.format(id=1, q1=100).rstrip("\n") + ",90,90,90\n"
    data = (header + row).encode()
    with pytest.raises(DataFileError, match="needs exactly one of quality1.. or natur1.."):
        import_ratings(campaign, io.BytesIO(data), "both.csv")
    assert not Hit.objects.exists()
    import_ratings(campaign, io.BytesIO(data), "both.csv", criterion="naturalness")
    judgments = Judgment.objects.filter(assignment__hit__criterion="naturalness")
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
