"""The readers of the published datasets, on the real files (skipped without ../shared) and
on small broken copies."""

import json
import shutil

import pytest

from nlgdata.datafiles import DataFileError
from nlgdata.inputs import check_input
from nlgdata.published import (
    ROTOWIRE_STANDARD,
    detokenise,
    read_logicnlg,
    read_rotowire,
    read_webnlg2020,
)


def test_read_logicnlg_gives_a_slot_per_statement_with_the_tables_references(logicnlg_data):
    dataset = read_logicnlg(logicnlg_data)
    entries = json.loads((logicnlg_data / "data" / "test_lm.json").read_text())
    assert len(dataset.items) == 4305
    assert len({item.data["table_id"] for item in dataset.items}) == 862
    first = dataset.items[0]
    table_id = "2-18424778-6.html.csv"
    assert first.external_id == f"{table_id}:0"
    assert first.data["title"] == "black ice (album)"
    assert first.data["header"] == ["country", "date", "label", "format", "catalogue no"]
    assert first.data["rows"][0] == ["europe", "17 october 2008", "columbia", "cd , double lp",
                                     "88697392232"]  # fmt: skip
    assert first.data["highlighted"] == [[r, 0] for r in range(len(first.data["rows"]))]
    assert first.references == [entry[0] for entry in entries[table_id]]
    labels = {s.name: s.label for s in dataset.systems}
    assert labels == {
        "field-infusing-trans": "Field-Infusing + Trans",
        "gpt-tabgen-sm": "GPT-TabGen (sm)",
        "gpt-coarse-to-fine-sm": "GPT-Coarse-to-Fine (sm)",
    }
    generated = json.loads((logicnlg_data / "outputs" / "GPT_gpt2_C2F_13.35.json").read_text())
    c2f = next(s for s in dataset.systems if s.name == "gpt-coarse-to-fine-sm")
    assert len(c2f.outputs) == 4305
    assert c2f.outputs[f"{table_id}:1"] == generated[table_id][1]


def test_read_logicnlg_names_the_table_of_a_short_outputs_file(logicnlg_data, tmp_path):
    folder = tmp_path / "logicnlg"
    shutil.copytree(logicnlg_data, folder)
    path = folder / "outputs" / "field_infusing.json"
    generated = json.loads(path.read_text())
    generated["2-18424778-6.html.csv"].pop()
    path.write_text(json.dumps(generated))
    with pytest.raises(DataFileError, match=r"field_infusing.json, column 2-18424778-6.html.csv"):
        read_logicnlg(folder)


def test_read_rotowire_gives_90_games_with_the_human_and_one_neural_summary(rotowire_data):
    dataset = read_rotowire(rotowire_data)
    assert len(dataset.items) == 90
    assert [s.name for s in dataset.systems] == ["human", "accuracy-shared-task"]
    assert all(len(s.outputs) == 90 for s in dataset.systems)
    first = json.loads((rotowire_data / "games" / "accuracy_test_30.jsonl").open().readline())
    game = dataset.items[0]
    assert game.external_id == "12_29_14 Kings at Nets"
    assert game.data["home"] | {"line": None} == {
        "city": "Brooklyn", "name": "Nets", "wins": 14, "losses": 16, "pts": 107, "line": None
    }  # fmt: skip
    assert game.data["home"]["line"]["PTS_QTR1"] == 27
    assert len(game.data["players"]) == len(first["box_score"]["PLAYER_NAME"]) == 25
    gay = next(p for p in game.data["players"] if p["name"] == "Rudy Gay")
    assert gay["team"] == "visitor" and gay["stats"]["PTS"] == 25
    assert dataset.systems[1].outputs[game.external_id] == first["detokenized_text"]
    assert game.references[0].startswith("Despite big performances from DeMarcus Cousins and")
    assert "by a score of 107-99 on Monday. The Nets" in game.references[0]


def test_read_rotowire_standard_is_no_games_summary(rotowire_data):
    dataset = read_rotowire(rotowire_data)
    assert dataset.standard == ROTOWIRE_STANDARD
    texts = {text for system in dataset.systems for text in system.outputs.values()}
    texts |= {reference for item in dataset.items for reference in item.references}
    assert ROTOWIRE_STANDARD[0] not in texts


def test_rotowire_standard_says_only_what_its_box_score_holds():
    text, kind, data = ROTOWIRE_STANDARD
    check_input(kind, data)
    for side in ("home", "visitor"):
        team = data[side]
        assert sum(team["line"][f"PTS_QTR{q}"] for q in range(1, 5)) == team["pts"]
        assert f"{team['city']} {team['name']} ({team['wins']}-{team['losses']})" in text
    for player in data["players"]:
        stats = player["stats"]
        assert stats["PTS"] == 2 * stats["FGM"] + stats["FG3M"] + stats["FTM"]
    stats = {player["name"]: player["stats"] for player in data["players"]}
    assert stats["Marcus Bell"]["PTS"] == 31 and stats["Marcus Bell"]["REB"] == 9
    assert stats["Tony Alvarez"]["PTS"] == 18 and stats["Tony Alvarez"]["AST"] == 11
    assert stats["Devon Price"]["PTS"] == 24 and stats["Devon Price"]["REB"] == 13
    assert "112-104" in text and "28-22 in the fourth quarter" in text


def test_detokenise_joins_rotowire_tokens_as_plain_text():
    tokens = "the Kings ' turnover troubles , a 13 - point lead ( 9 - of - 12 ) .".split()
    assert detokenise(tokens) == "the Kings' turnover troubles, a 13-point lead (9-of-12)."


def test_read_webnlg2020_gives_178_triple_sets_and_16_systems(webnlg_data):
    dataset = read_webnlg2020(webnlg_data)
    assert len(dataset.items) == 178
    assert len(dataset.systems) == 16
    assert dataset.items[0].external_id == "3"
    assert dataset.items[0].data == {"triples": [["MotorSport Vision", "city", "Fawkham"]]}
    lines = (webnlg_data / "outputs" / "FBConvAI.primary.en").read_text().splitlines()
    fb = next(s for s in dataset.systems if s.name == "FBConvAI")
    assert fb.outputs["1730"] == lines[1729].strip()
    forge = next(s for s in dataset.systems if s.name == "Baseline-FORGE2017")
    # Its empty line for sample 533 is its output there (scored 0 by the raters): kept.
    assert forge.missing == [] and len(forge.outputs) == 178 and forge.outputs["533"] == ""
    huawei = next(s for s in dataset.systems if s.name == "Huawei_Noahs_Ark_Lab")
    assert huawei.label == "Huawei Noah's Ark Lab"


def test_read_logicnlg_table_names_the_line_of_a_short_row(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "tables" / "t.html.csv").write_text("a#b\n1#2\n3\n")
    (tmp_path / "data" / "test_lm.json").write_text(json.dumps({"t.html.csv": [["s", [0], "x"]]}))
    with pytest.raises(DataFileError, match=r"^t.html.csv, line 3: 1 cells where the header has 2"):
        read_logicnlg(tmp_path)


def test_read_logicnlg_refuses_a_linked_column_outside_the_table(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "tables" / "t.html.csv").write_text("a#b\n1#2\n")
    (tmp_path / "data" / "test_lm.json").write_text(json.dumps({"t.html.csv": [["s", [2], "x"]]}))
    with pytest.raises(DataFileError, match=r"test_lm.json, column t.html.csv\[0\]: linked"):
        read_logicnlg(tmp_path)


def test_read_rotowire_names_the_line_of_a_game_that_is_not_json(tmp_path):
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "part.jsonl").write_text("\n{not json\n")
    with pytest.raises(DataFileError, match=r"^part.jsonl, line 2: not JSON"):
        read_rotowire(tmp_path)


def test_read_rotowire_reads_outputs_jsonl_beside_games_kept_at_the_top(rotowire_data, tmp_path):
    """Games may lie in the folder itself: outputs.jsonl beside them is no games file."""
    first = (rotowire_data / "games" / "accuracy_test_30.jsonl").open().readline()
    (tmp_path / "one.jsonl").write_text(first)
    game = json.loads(first)
    key = f"{game['day']} {game['vis_name']} at {game['home_name']}"
    record = {"game": key, "system": "Template (Wiseman et al.)", "text": "The Nets won."}
    (tmp_path / "outputs.jsonl").write_text(json.dumps(record) + "\n")
    dataset = read_rotowire(tmp_path)
    assert [item.external_id for item in dataset.items] == [key]
    template = dataset.systems[-1]
    assert (template.name, template.outputs, template.missing) == (
        "Template (Wiseman et al.)",
        {key: "The Nets won."},
        [],
    )
    assert template.sha256 not in {system.sha256 for system in dataset.systems[:-1]}
