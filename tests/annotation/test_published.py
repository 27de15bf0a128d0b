"""`manage.py load_published`: each seed dataset loaded from the real files (skipped where
../shared is absent), checked against the files; repeats, bad files and the E2E path."""

import json
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign, CampaignCriterion, DataFile, Item, Output, System
from annotation.published import load_dataset
from nlgdata.published import detokenise, read_webnlg2020

pytestmark = pytest.mark.django_db


def load(*args: str) -> str:
    out = StringIO()
    call_command("load_published", *args, stdout=out)
    return out.getvalue()


def test_load_published_logicnlg_makes_a_slot_per_statement_and_three_systems(logicnlg_data):
    out = load("logicnlg", str(logicnlg_data))
    campaign = Campaign.objects.get(slug="logicnlg")
    assert "loaded 4,305 items" in out
    assert campaign.items.count() == 4305
    assert len(set(campaign.items.values_list("input_data__table_id", flat=True))) == 862
    assert dict(campaign.systems.values_list("name", "label")) == {
        "field-infusing-trans": "Field-Infusing + Trans",
        "gpt-tabgen-sm": "GPT-TabGen (sm)",
        "gpt-coarse-to-fine-sm": "GPT-Coarse-to-Fine (sm)",
    }
    assert Output.objects.filter(item__campaign=campaign).count() == 3 * 4305
    entries = json.loads((logicnlg_data / "data" / "test_lm.json").read_text())
    table_id = "2-18424778-6.html.csv"
    item = campaign.items.get(external_id=f"{table_id}:1")
    assert item.input_kind == "table"
    assert item.references == [entry[0] for entry in entries[table_id]]
    assert item.input_data["title"] == entries[table_id][1][2]
    generated = json.loads((logicnlg_data / "outputs" / "field_infusing.json").read_text())
    assert item.outputs.get(system__name="field-infusing-trans").text == generated[table_id][1]
    for table_id in list(entries)[::97]:  # a sample of tables, against their files
        check_logicnlg_table(campaign, logicnlg_data, table_id, entries[table_id])
    quality = campaign.criteria.get(name="quality")
    assert "true of the table" in quality.question and not quality.coverage_required
    assert campaign.outputs_per_hit == 3 and campaign.status == Campaign.Status.DRAFT
    again = load("logicnlg", str(logicnlg_data))
    assert "nothing new to load" in again
    assert Output.objects.filter(item__campaign=campaign).count() == 3 * 4305
    assert DataFile.objects.filter(campaign=campaign).count() == 4


LOGICNLG_FILES = {
    "field-infusing-trans": "field_infusing.json",
    "gpt-tabgen-sm": "GPT_gpt2_12.65.json",
    "gpt-coarse-to-fine-sm": "GPT_gpt2_C2F_13.35.json",
}


def check_logicnlg_table(campaign, folder, table_id: str, entries: list) -> None:
    """Every slot of the table as its files have it: the table, title, linked columns,
    references and each system's statement."""
    lines = (folder / "tables" / table_id).read_text(encoding="utf-8").splitlines()
    header, rows = lines[0].split("#"), [line.split("#") for line in lines[1:]]
    outputs = {
        system: json.loads((folder / "outputs" / file).read_text())[table_id]
        for system, file in LOGICNLG_FILES.items()
    }
    items = campaign.items.filter(input_data__table_id=table_id).order_by("id")
    assert items.count() == len(entries)
    for index, (item, entry) in enumerate(zip(items, entries, strict=True)):
        data = item.input_data
        assert item.external_id == f"{table_id}:{index}" and data["statement"] == index
        assert (data["header"], data["rows"], data["title"]) == (header, rows, entry[2])
        assert {column for _, column in data["highlighted"]} == set(entry[1])
        assert item.references == [e[0] for e in entries]
        texts = dict(item.outputs.values_list("system__name", "text"))
        assert texts == {system: outputs[system][index].strip() for system in LOGICNLG_FILES}


def test_load_published_rotowire_makes_games_with_the_human_summary(rotowire_data):
    out = load("rotowire", str(rotowire_data), "--campaign", "nba")
    assert "accuracy-shared-task: 90 of 90 texts share at least 90% of their words" in out
    campaign = Campaign.objects.get(slug="nba")
    assert campaign.items.count() == 90
    assert sorted(campaign.systems.values_list("name", flat=True)) == [
        "accuracy-shared-task",
        "human",
    ]
    assert Output.objects.filter(item__campaign=campaign).count() == 2 * 90
    first = json.loads((rotowire_data / "games" / "accuracy_test_30.jsonl").open().readline())
    game = campaign.items.get(external_id="12_29_14 Kings at Nets")
    assert game.input_kind == "boxscore"
    assert game.input_data["visitor"]["pts"] == 99
    neural = game.outputs.get(system__name="accuracy-shared-task")
    assert neural.text == first["detokenized_text"]
    human = game.outputs.get(system__name="human")
    assert human.text == game.references[0]
    assert human.text.startswith("Despite big performances from DeMarcus Cousins")
    # The standard is a made-up game's summary, not a rated output of any game.
    assert campaign.standard_input_kind == "boxscore"
    assert campaign.standard_text.startswith("The Riverside Otters (21-10) beat")
    assert not Output.objects.filter(text=campaign.standard_text).exists()
    for path in sorted((rotowire_data / "games").glob("*.jsonl")):  # every game, against its line
        for line in path.read_text(encoding="utf-8").splitlines():
            check_rotowire_game(campaign, json.loads(line))


def check_rotowire_game(campaign, game: dict) -> None:
    item = campaign.items.get(
        external_id=game.get("id") or f"{game['day']} {game['vis_name']} at {game['home_name']}"
    )
    data = item.input_data
    for side, prefix in (("home", "home"), ("visitor", "vis")):
        line = game[f"{prefix}_line"]
        assert (data[side]["name"], data[side]["city"]) == (
            game[f"{prefix}_name"],
            line["TEAM-CITY"],
        )
        assert (data[side]["pts"], data[side]["wins"]) == (
            int(line["TEAM-PTS"]),
            int(line["TEAM-WINS"]),
        )
    box = game["box_score"]
    assert [p["name"] for p in data["players"]] == [
        box["PLAYER_NAME"][row] for row in sorted(box["PLAYER_NAME"], key=int)
    ]
    first = sorted(box["PLAYER_NAME"], key=int)[0]
    assert str(data["players"][0]["stats"]["PTS"]) == box["PTS"][first]
    texts = dict(item.outputs.values_list("system__name", "text"))
    assert texts["human"] == item.references[0]
    assert item.references == [detokenise(game["summary"])]  # the tokens as plain text
    assert texts["accuracy-shared-task"] == game["detokenized_text"].strip()


def rotowire_folder(rotowire_data, tmp_path, outputs: list[dict]):
    """A RotoWire folder of the first 3 games of the test part (a copy in tmp_path), with
    `outputs` as its outputs.jsonl; and the games' item ids."""
    folder = tmp_path / "rotowire"
    (folder / "games").mkdir(parents=True)
    lines = (rotowire_data / "games" / "accuracy_test_30.jsonl").open().readlines()[:3]
    (folder / "games" / "test_3.jsonl").write_text("".join(lines))
    with (folder / "outputs.jsonl").open("w") as file:
        file.writelines(json.dumps(record) + "\n" for record in outputs)
    games = [json.loads(line) for line in lines]
    return folder, [f"{g['day']} {g['vis_name']} at {g['home_name']}" for g in games]


def test_load_published_rotowire_reads_outputs_jsonl_beside_the_games(rotowire_data, tmp_path):
    folder, games = rotowire_folder(rotowire_data, tmp_path, [])
    records = [
        {"game": games[0], "system": "templ", "text": "The Nets won."},
        {"game": games[1], "system": "templ", "text": ""},  # it produced no text
        {"game": games[0], "system": "ncp-cc", "text": "The Kings lost."},
        {"game": games[2], "system": "templ", "text": " The Heat won. "},
    ]
    (folder / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = load("rotowire", str(folder), "--campaign", "nba3")
    assert "3 outputs of templ (1 empty: the system produced no text)" in out
    assert "1 outputs of ncp-cc" in out
    campaign = Campaign.objects.get(slug="nba3")
    texts = dict(
        Output.objects.filter(item__campaign=campaign, system__name="templ").values_list(
            "item__external_id", "text"
        )
    )
    assert texts == {games[0]: "The Nets won.", games[1]: "", games[2]: "The Heat won."}
    ncp = campaign.systems.get(name="ncp-cc")
    assert list(ncp.outputs.values_list("item__external_id", "text")) == [
        (games[0], "The Kings lost.")
    ]
    files = DataFile.objects.filter(campaign=campaign, kind=DataFile.Kind.OUTPUTS)
    outputs_files = files.filter(name="outputs.jsonl").order_by("system__name")
    assert list(outputs_files.values_list("system__name", "rows")) == [("ncp-cc", 1), ("templ", 3)]
    assert len(set(files.values_list("sha256", flat=True))) == 4  # each system's own digest
    assert "nothing new to load" in load("rotowire", str(folder), "--campaign", "nba3")
    assert Output.objects.filter(item__campaign=campaign).count() == 3 * 2 + 4


@pytest.mark.parametrize(
    "records, message",
    [
        (
            [{"game": "nowhere", "system": "templ", "text": "A game."}],
            "outputs.jsonl, line 1, column game: no game 'nowhere' in games/",
        ),
        (
            [
                {"game": 0, "system": "templ", "text": "A."},
                {"game": 0, "system": "templ", "text": "B."},
            ],
            "outputs.jsonl, line 2, column game: game .* of system 'templ' is also on line 1",
        ),
        (
            [{"game": 0, "system": "human", "text": "A game."}],
            "outputs.jsonl, line 1, column system: 'human' is the name of the dataset's own",
        ),
        ([{"game": 0, "system": "templ"}], "outputs.jsonl, line 1, column text: missing field"),
    ],
)
def test_load_published_rotowire_refuses_a_bad_outputs_line_naming_it(
    rotowire_data, tmp_path, records, message
):
    _, games = rotowire_folder(rotowire_data, tmp_path, [])
    for record in records:
        if record["game"] == 0:
            record["game"] = games[0]
    rotowire_folder(rotowire_data, tmp_path / "again", records)
    with pytest.raises(CommandError, match=message):
        load("rotowire", str(tmp_path / "again" / "rotowire"))
    assert not Campaign.objects.exists() and not Output.objects.exists()


def test_load_published_webnlg_makes_178_items_and_16_systems(webnlg_data):
    out = load("webnlg2020", str(webnlg_data))
    campaign = Campaign.objects.get(slug="webnlg2020")
    assert campaign.items.count() == 178
    assert campaign.systems.count() == 16
    # FORGE2017's empty line for sample 533 is its output there, which the organisers'
    # raters scored 0 on every criterion: kept, and counted in the summary.
    assert Output.objects.filter(item__campaign=campaign).count() == 16 * 178
    assert "178 outputs of Baseline-FORGE2017 (1 empty: the system produced no text)" in out
    forge = campaign.systems.get(name="Baseline-FORGE2017")
    assert list(forge.outputs.empty().values_list("item__external_id", flat=True)) == ["533"]
    assert "has no output for" not in out
    item = campaign.items.get(external_id="29")
    assert item.input_data["triples"][1] == [
        "Abdul Taib Mahmud",
        "party",
        "Parti Pesaka Bumiputera Bersatu",
    ]
    lines = (webnlg_data / "outputs" / "NILC.primary.en").read_text().splitlines()
    assert item.outputs.get(system__name="NILC").text == lines[28].strip()
    # Systems keep the names of the challenge's files, with a URL-safe key beside.
    amazon = campaign.systems.get(name="Amazon_AI_(Shanghai)")
    assert (amazon.label, amazon.key) == ("Amazon AI (Shanghai)", "amazon_ai_shanghai")
    sampled = json.loads((webnlg_data / "inputs" / "en_sampled_triples.json").read_text())
    outputs = {  # every system's file, line n the output for sample n
        path.name.removesuffix(".primary.en"): path.read_text().splitlines()
        for path in (webnlg_data / "outputs").glob("*.primary.en")
    }
    for sample_id, triples in sampled.items():
        item = campaign.items.get(external_id=sample_id)
        assert item.input_data["triples"] == triples
        texts = dict(item.outputs.values_list("system__name", "text"))
        expected = {name: lines[int(sample_id) - 1].strip() for name, lines in outputs.items()}
        assert texts == expected
    assert campaign.standard_input_kind == "triples" and campaign.standard_text


def test_load_published_writes_nothing_when_a_file_is_bad(webnlg_data, tmp_path):
    folder = tmp_path / "webnlg2020"
    shutil.copytree(webnlg_data, folder)
    with (folder / "outputs" / "bt5.primary.en").open("w") as broken:
        broken.write("ok\n" * 2 + "x" * 6000 + "\n" * 2000)
    message = r"bt5.primary.en: the output for item '3': 6,000 characters; the limit is 5,000"
    with pytest.raises(CommandError, match=message):
        load("webnlg2020", str(folder))
    assert not Campaign.objects.filter(slug="webnlg2020").exists()
    assert Item.objects.count() == 0 and System.objects.count() == 0


def test_load_published_adds_only_a_new_systems_outputs(webnlg_data, tmp_path):
    dataset = read_webnlg2020(webnlg_data)
    new_system = dataset.systems.pop()
    load_dataset(dataset)
    campaign = Campaign.objects.get(slug="webnlg2020")
    assert campaign.systems.count() == 15
    dataset.systems.append(new_system)
    summary = load_dataset(dataset)
    assert summary.outputs == {new_system.name: 178} and summary.items == 0
    assert campaign.systems.count() == 16
    assert CampaignCriterion.objects.filter(campaign=campaign).count() == 2


def test_load_published_refuses_a_campaign_with_other_items(webnlg_data, rotowire_data):
    load("rotowire", str(rotowire_data), "--campaign", "mixed")
    with pytest.raises(CommandError, match="already has items that did not come from"):
        load("webnlg2020", str(webnlg_data), "--campaign", "mixed")
    assert Item.objects.filter(campaign__slug="mixed").count() == 90


def test_load_published_e2e_imports_the_test_set_and_21_systems(e2e_data):
    load("e2e", str(e2e_data))
    campaign = Campaign.objects.get(slug="e2e")
    assert campaign.items.count() == 630
    assert campaign.systems.count() == 21
    assert campaign.systems.get(name="tuda").architecture == "templates"
    assert Output.objects.filter(item__campaign=campaign).count() == 21 * 630
    assert "nothing new to load" in load("e2e", str(e2e_data))
    assert Output.objects.filter(item__campaign=campaign).count() == 21 * 630


def test_load_published_refuses_a_missing_folder(tmp_path):
    with pytest.raises(CommandError, match="no such folder"):
        load("rotowire", str(tmp_path / "nowhere"))
    assert not Campaign.objects.exists()
