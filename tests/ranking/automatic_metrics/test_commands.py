"""`manage.py metrics` on the published E2E data gives back E2E Table 8."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from ranking.automatic_metrics.models import MetricRun
from ranking.metrics import coco
from tests.factories import make_campaign, make_item, make_output, make_system
from tests.ranking.automatic_metrics.test_views import (
    METRICS_CSV_COLUMNS,
    ranked_and_scored_campaign,
)

pytestmark = pytest.mark.django_db

# Table 8 prints four decimals; the issue asks for these tolerances.
TOLERANCE = {"bleu": 0.002, "nist": 0.02, "meteor": 0.002, "rouge_l": 0.002, "cider": 0.01}


# Three of Table 8's systems, its first, one from the middle and its last: each system's
# scores are its own (CIDEr's document frequencies come from the references alone), so the
# three rows equal the table's as the 21 would, in a fifth of the minutes METEOR's Java takes.
TABLE_8_SAMPLE = ("tgen", "tuda", "forge1")


@pytest.mark.slow
def test_metrics_reproduces_e2e_table_8(e2e_data, tmp_path, capsys):
    if reason := coco.java_missing():
        pytest.skip(f"METEOR, ROUGE-L and CIDEr as E2E computed them {reason}")
    call_command("import_items", "e2e", str(e2e_data / "testset_w_refs.csv"), "--create-campaign")
    for name in TABLE_8_SAMPLE:
        path = e2e_data / "outputs" / f"{name}.tsv"
        call_command("import_outputs", "e2e", name, str(path), "--create-system")
    out = tmp_path / "metrics.csv"
    call_command("metrics", "e2e", "--csv", str(out))
    assert "3 systems, 1890 outputs" in capsys.readouterr().out
    overlap = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert list(overlap[0]) == METRICS_CSV_COLUMNS
    table = csv.DictReader((e2e_data / "table8_word_overlap.csv").open())
    published = [row for row in table if row["system"] in TABLE_8_SAMPLE]
    ours = {row["system"]: row for row in overlap}
    assert set(ours) == set(TABLE_8_SAMPLE) and len(published) == len(TABLE_8_SAMPLE)
    for row in published:
        for metric, tolerance in TOLERANCE.items():
            got, want = float(ours[row["system"]][metric]), float(row[metric])
            assert abs(got - want) <= tolerance, (row["system"], metric, got, want)
    # Table 8 lists systems by normalised average, best first; so does the CSV.
    assert [row["system"] for row in overlap] == [row["system"] for row in published]
    for row in published:
        got = float(ours[row["system"]]["normalised_average"])
        assert got == pytest.approx(float(row["normalised_average"]), abs=1e-4)
    assert all(row["slot_outputs"] == "630" and row["ser"] for row in overlap)
    run = MetricRun.objects.get()
    assert run.status == "done" and run.missing == {}


def test_metrics_unknown_campaign_is_an_error():
    with pytest.raises(CommandError, match="no campaign 'nope'"):
        call_command("metrics", "nope")


def test_metrics_without_outputs_reports_why():
    campaign = make_campaign()
    with pytest.raises(CommandError, match="no outputs yet"):
        call_command("metrics", campaign.slug)
    assert MetricRun.objects.get().status == "failed"


def test_metrics_writes_the_metrics_and_the_correlations_csv(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # Java metrics missing: no JVM start
    campaign = ranked_and_scored_campaign()
    metrics_out, correlations_out = tmp_path / "m.csv", tmp_path / "c.csv"
    call_command(
        "metrics",
        campaign.slug,
        "--csv",
        str(metrics_out),
        "--correlations-csv",
        str(correlations_out),
    )
    rows = list(csv.DictReader(metrics_out.open(encoding="utf-8")))
    assert list(rows[0]) == METRICS_CSV_COLUMNS and len(rows) == 3
    correlations = list(csv.DictReader(correlations_out.open(encoding="utf-8")))
    assert {(row["protocol"], row["score"]) for row in correlations} == {("calibrated", "strength")}
    assert capsys.readouterr().out.count("CSV written to") == 2
    assert MetricRun.objects.filter(campaign=campaign).count() == 2


def test_metrics_csv_has_logicnlg_bleu_columns_for_table_items(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no Java: the Java metrics are left out, fast
    campaign = make_campaign(slug="tables")
    references = ["the cat sat on the mat", "a cat is on the mat"]
    systems = {"exact": "the cat is on the mat", "off": "dogs bark"}
    for name, text in systems.items():
        system = make_system(campaign, name=name)
        for m in range(2):
            item = campaign.items.filter(external_id=str(m)).first() or make_item(
                campaign,
                external_id=str(m),
                input_kind="table",
                input_data={"title": f"t{m}", "header": ["a"], "rows": [["1"]]},
                input_key=f"table:{m}",
                references=references,
            )
            make_output(item, system, text=text)
    out = tmp_path / "metrics.csv"
    call_command("metrics", "tables", "--csv", str(out))
    assert "BLEU-3" in capsys.readouterr().out
    overlap = list(csv.DictReader(out.open(encoding="utf-8")))
    columns = list(overlap[0])
    after = columns.index("normalised_average") + 1
    assert columns[after : after + 4] == ["bleu1", "bleu2", "bleu3", "slot_outputs"]
    rows = {row["system"]: row for row in overlap}
    assert float(rows["exact"]["bleu1"]) == 1.0 and float(rows["off"]["bleu1"]) == 0.0
    assert float(rows["exact"]["bleu3"]) == pytest.approx(0.75**0.33, abs=1e-6)


def test_metrics_csv_has_the_number_check_for_box_score_items(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no Java: the Java metrics are left out, fast
    campaign = make_campaign(slug="games")
    game = {
        "home": {"city": "Sacramento", "name": "Kings", "wins": 13, "losses": 18, "pts": 99},
        "visitor": {"city": "Brooklyn", "name": "Nets", "wins": 14, "losses": 16, "pts": 107},
        "players": [{"name": "Rudy Gay", "team": "home", "stats": {"PTS": 25, "REB": 9}}],
    }
    item = make_item(
        campaign,
        external_id="g1",
        input_kind="boxscore",
        input_data=game,
        input_key="boxscore:g1",
        references=["Rudy Gay scored 25 points."],
    )
    texts = {"right": "Rudy Gay scored 25 points and 9 rebounds.", "wrong": "Rudy Gay scored 31."}
    for name, text in texts.items():
        make_output(item, make_system(campaign, name=name), text=text)
    out = tmp_path / "metrics.csv"
    call_command("metrics", "games", "--csv", str(out))
    assert "numbers" in capsys.readouterr().out
    rows = {row["system"]: row for row in csv.DictReader(out.open(encoding="utf-8"))}
    assert list(rows["right"])[-3:] == ["number_outputs", "numbers_checked", "numbers_supported"]
    assert (rows["right"]["number_outputs"], rows["right"]["numbers_checked"]) == ("1", "2")
    assert float(rows["right"]["numbers_supported"]) == 1.0
    assert float(rows["wrong"]["numbers_supported"]) == 0.0
    run = MetricRun.objects.get()
    assert "nearest player or team" in run.implementations["numbers_supported"]
