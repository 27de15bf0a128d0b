import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotator, Campaign, Hit, Item, Judgment, Output, System

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("brief_null_check")]


def test_import_commands_load_the_published_e2e_files(e2e_data):
    call_command("import_items", "e2e", str(e2e_data / "testset_w_refs.csv"), "--create-campaign")
    outputs = sorted((e2e_data / "outputs").glob("*.tsv"))
    files = [str(path) for path in outputs]
    call_command("import_outputs", "e2e", "--create-system", "--files", *files)  # the README's
    call_command("import_ratings", "e2e", str(e2e_data / "human_ratings" / "quality.csv"))
    campaign = Campaign.objects.get(slug="e2e")
    assert len(outputs) == 21
    assert Item.objects.filter(campaign=campaign).count() == 630
    assert System.objects.filter(campaign=campaign).count() == 21
    assert Output.objects.filter(item__campaign=campaign).count() == 21 * 630
    assert (
        Hit.objects.filter(
            campaign=campaign, criterion=campaign.criteria.get(name="quality")
        ).count()
        == 2979
    )
    assert Judgment.objects.filter(assignment__hit__campaign=campaign).count() == 5 * 2979
    assert Annotator.objects.filter(campaign=campaign).count() == 112
    with pytest.raises(CommandError, match="already imported"):
        call_command("import_ratings", "e2e", str(e2e_data / "human_ratings" / "quality.csv"))
    assert Judgment.objects.filter(assignment__hit__campaign=campaign).count() == 5 * 2979


def test_import_ratings_alone_builds_items_systems_and_outputs(e2e_data):
    out = io.StringIO()
    call_command(
        "import_ratings",
        "e2e",
        str(e2e_data / "human_ratings" / "quality.csv"),
        "--create-campaign",
        stdout=out,
    )
    campaign = Campaign.objects.get(slug="e2e")
    assert campaign.items.count() == 630
    assert campaign.systems.count() == 21
    assert campaign.hits.count() == 2979
    # E2E's typed slips (111,111 twice, 5,656, 1,100) are flagged and stored as given.
    assert (
        "4 scores off the scale (above 1,000, ten times the standard's 100), stored as given,"
        " by annotators 44081586 (2), 43906268 (1), 44067725 (1)" in out.getvalue()
    )
    judged = Judgment.objects.filter(assignment__hit__campaign=campaign)
    assert sorted(judged.filter(score__gt=1000).values_list("score", flat=True)) == [
        1100,
        5656,
        111111,
        111111,
    ]
    assert judged.filter(score__gt=100).count() == 78  # above the standard: on the scale


def test_import_outputs_unknown_system_is_refused_and_nothing_written(tmp_path):
    call_command("demo")
    path = tmp_path / "new.tsv"
    path.write_text("MR\toutput\n")
    with pytest.raises(CommandError, match="unknown system 'nobody' in campaign 'demo'"):
        call_command("import_outputs", "demo", "nobody", str(path))
    assert not System.objects.filter(name="nobody").exists()


def test_import_outputs_failed_file_leaves_no_new_system(tmp_path):
    call_command("demo")
    path = tmp_path / "bad.tsv"
    path.write_text('MR\toutput\n"name[Nowhere]"\tHello.\n')
    with pytest.raises(CommandError, match="bad.tsv, line 2, column MR"):
        call_command("import_outputs", "demo", "newsys", str(path), "--create-system")
    assert not System.objects.filter(name="newsys").exists()


def two_systems_files(tmp_path, second_text: str):
    """The demo campaign and two systems' JSON Lines outputs of its first item: "Hello.",
    then `second_text`."""
    call_command("demo")
    item = Item.objects.filter(campaign__slug="demo").order_by("pk").first().external_id
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text(json.dumps({"item": item, "text": "Hello."}) + "\n")
    second.write_text(json.dumps({"item": item, "text": second_text}) + "\n")
    return first, second


def test_import_outputs_of_several_files_names_each_system_after_its_file(tmp_path):
    first, second = two_systems_files(tmp_path, "Bye.")
    out = io.StringIO()
    call_command(
        "import_outputs", "demo", "--files", str(first), str(second), "--create-system", stdout=out
    )
    texts = Output.objects.filter(system__name__in=["first", "second"]).values_list(
        "system__name", "text"
    )
    assert sorted(texts) == [("first", "Hello."), ("second", "Bye.")]
    assert "first.jsonl" in out.getvalue() and "second.jsonl" in out.getvalue()


def test_import_outputs_of_several_files_writes_nothing_when_one_fails(tmp_path):
    first, second = two_systems_files(tmp_path, "Bye.")
    second.write_text(json.dumps({"item": "nowhere", "text": "Bye."}) + "\n")
    with pytest.raises(CommandError, match="second.jsonl, line 1"):
        call_command(
            "import_outputs", "demo", "--files", str(first), str(second), "--create-system"
        )
    assert not System.objects.filter(name__in=["first", "second"]).exists()
    assert not Output.objects.filter(text="Hello.").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["tgen", "--files", "x.tsv"], "either a system and its file, or --files, not both"),
        (["tgen"], "give a system and its file, or --files FILE"),
        (["--files", "a/tgen.tsv", "b/tgen.tsv"], "--files names system 'tgen' twice"),
        (["--files", "missing.tsv"], "missing.tsv: no such file"),
    ],
)
def test_import_outputs_refuses_unclear_arguments_before_importing(arguments, message):
    call_command("demo")
    outputs = Output.objects.count()
    with pytest.raises(CommandError, match=message):
        call_command("import_outputs", "demo", *arguments)
    assert Output.objects.count() == outputs


def test_import_items_hostile_file_is_refused_and_nothing_written(tmp_path):
    path = tmp_path / "items.jsonl"
    good = '{"id": "1", "kind": "mr", "input": {"attributes": [["name", "A"]]}}'
    path.write_text(good + '\n{"id": "2", "kind": "mr", "input": ' + "[" * 10**5 + "]" * 10**5)
    message = "items.jsonl, line 2, column input: nested deeper than 32 levels"
    with pytest.raises(CommandError, match=f"{message}\nNothing was imported."):
        call_command("import_items", "demo", str(path), "--create-campaign")
    assert not Item.objects.exists()
    assert not Campaign.objects.exists()


def test_import_items_unknown_campaign_names_it(tmp_path):
    path = tmp_path / "items.csv"
    path.write_text("mr,ref\n")
    with pytest.raises(CommandError, match="no campaign 'nope'"):
        call_command("import_items", "nope", str(path))
    assert not Campaign.objects.exists()


def test_demo_builds_once_and_reset_rebuilds():
    call_command("demo")
    campaign = Campaign.objects.get(slug="demo")
    assert campaign.status == "open"
    assert set(campaign.criteria.filter(is_open=True).values_list("name", flat=True)) == {
        "quality",
        "naturalness",
    }
    assert campaign.items.count() == 36
    assert Output.objects.filter(item__campaign=campaign).count() >= 4 * 36
    call_command("demo")
    assert Campaign.objects.filter(slug="demo").count() == 1
    call_command("demo", "--reset")
    assert Campaign.objects.get(slug="demo").pk != campaign.pk
