"""Judgments out: `manage.py export_judgments` in csv, jsonl and the E2E CrowdFlower layout,
checked against the database, and the E2E layout read back by `import_ratings`."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command

from annotation.datafiles.ratings_import import import_ratings
from annotation.identity import set_excluded
from annotation.models import Assignment, Campaign, Judgment, System
from ranking.engine import e2e_protocol, summarise
from ranking.service import load_ranking_input
from tests.factories import (
    make_annotator,
    make_campaign,
    make_item,
    make_judged_hit,
    make_output,
    make_system,
    make_system_set,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("brief_null_check")]


def exported(slug: str, *options: str) -> str:
    out = io.StringIO()
    call_command("export_judgments", slug, *options, stdout=out)
    return out.getvalue()


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def judged_campaign():
    """Two quality HITs (one by a Prolific worker, taking 42 s, with coverage marks; one
    flagged) and a naturalness HIT by an excluded annotator."""
    campaign, systems, items = make_system_set(systems=3, items=3)
    worker = make_annotator(campaign, external_id="PROLIFIC-PID-SECRET")
    first = make_judged_hit(list(items[0].outputs.order_by("system__name")), [300, 100, 50], worker)
    first.submitted_at = first.started_at + timedelta(seconds=42)
    first.save(update_fields=["submitted_at"])
    first.judgments.filter(slot__position=1).update(reflects_perfectly=True)
    first.judgments.filter(slot__position=2).update(adds_information=True, misses_information=True)
    flagged = make_judged_hit(list(items[1].outputs.order_by("-system__name")), [10, 20, 20])
    Assignment.objects.filter(pk=flagged.pk).update(flag=Assignment.Flag.TOO_FAST)
    outputs = list(items[2].outputs.order_by("system__name"))
    natural = make_judged_hit(outputs, [5, 6, 7], criterion="naturalness")
    set_excluded(natural.annotator, True)
    return campaign, first, flagged, natural


def test_export_csv_has_a_row_per_judgment_as_the_database_holds_it():
    campaign, first, flagged, natural = judged_campaign()
    text = exported(campaign.slug, "--format", "csv")
    assert "PROLIFIC-PID-SECRET" not in text
    rows = csv_rows(text)
    assert len(rows) == Judgment.objects.count() == 9
    assert [(r["criterion"], r["hit"], r["position"]) for r in rows] == [
        ("naturalness", str(natural.hit_id), "1"),
        ("naturalness", str(natural.hit_id), "2"),
        ("naturalness", str(natural.hit_id), "3"),
        ("quality", str(first.hit_id), "1"),
        ("quality", str(first.hit_id), "2"),
        ("quality", str(first.hit_id), "3"),
        ("quality", str(flagged.hit_id), "1"),
        ("quality", str(flagged.hit_id), "2"),
        ("quality", str(flagged.hit_id), "3"),
    ]
    for row in rows:
        judgment = Judgment.objects.select_related(
            "assignment__annotator", "assignment__hit__item", "slot__output__system"
        ).get(assignment_id=row["assignment"], slot__position=row["position"])
        assignment = judgment.assignment
        assert row["item"] == assignment.hit.item.external_id
        assert row["system"] == judgment.slot.output.system.name
        assert row["output"] == judgment.slot.output.text
        assert float(row["score"]) == judgment.score
        assert row["annotator"] == str(assignment.annotator_id)
        assert row["flag"] == assignment.flag
        assert row["excluded"] == str(assignment.annotator.is_excluded).lower()
        assert row["started_at"] == assignment.started_at.isoformat()
        assert (row["composed_by"], row["attention_check"]) == ("balanced", "false")
    first_rows = [r for r in rows if r["hit"] == str(first.hit_id)]
    assert [r["seconds"] for r in first_rows] == ["42.0"] * 3
    assert [
        (r["adds_information"], r["misses_information"], r["reflects_perfectly"])
        for r in first_rows
    ] == [("false", "false", "true"), ("true", "true", "false"), ("false", "false", "false")]
    counted = {r["hit"]: r["counted"] for r in rows}
    assert counted == {
        str(first.hit_id): "true",
        str(flagged.hit_id): "false",  # too fast
        str(natural.hit_id): "false",  # its annotator is excluded
    }
    assert {r["flag"] for r in rows if r["hit"] == str(flagged.hit_id)} == {"too_fast"}


def test_export_jsonl_holds_the_same_rows_with_json_types():
    campaign, first, *_ = judged_campaign()
    lines = exported(campaign.slug, "--format", "jsonl", "--criterion", "quality").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 6
    record = records[0]
    assert record["hit"] == first.hit_id and record["position"] == 1
    assert record["score"] == 300.0 and record["seconds"] == 42.0
    assert record["reflects_perfectly"] is True and record["counted"] is True
    assert record["annotator"] == first.annotator_id
    assert record["submitted_at"] == (first.started_at + timedelta(seconds=42)).isoformat()
    assert record["attention_check"] is False and record["composed_by"] == "balanced"
    assert list(record) == list(csv_rows(exported(campaign.slug))[0])


def test_export_criterion_filter_keeps_that_criterion_only():
    campaign, _, _, natural = judged_campaign()
    rows = csv_rows(exported(campaign.slug, "--criterion", "naturalness"))
    assert {(r["criterion"], r["hit"]) for r in rows} == {("naturalness", str(natural.hit_id))}
    assert len(rows) == 3


def test_export_csv_makes_formula_like_names_and_outputs_safe():
    campaign = make_campaign()
    item = make_item(campaign)
    risky = make_output(item, make_system(campaign, name="-cmd"), text='=HYPERLINK("http://x")')
    plain = make_output(item, make_system(campaign, name="plain"), text="A pub.")
    make_judged_hit([risky, plain], [10, 20])
    row = csv_rows(exported(campaign.slug))[0]
    assert row["system"] == "'-cmd"
    assert row["output"] == '\'=HYPERLINK("http://x")'


def test_export_to_a_file(tmp_path):
    campaign, *_ = judged_campaign()
    out = tmp_path / "judgments.jsonl"
    call_command("export_judgments", campaign.slug, "--format", "jsonl", "--out", str(out))
    assert len(out.read_text(encoding="utf-8").splitlines()) == 9


def test_export_unknown_campaign_or_criterion_is_an_error():
    with pytest.raises(CommandError, match="no campaign 'nope'"):
        exported("nope")
    campaign = make_campaign()
    campaign.criteria.filter(name="naturalness").delete()
    with pytest.raises(
        CommandError, match="no criterion .naturalness. \\(its criteria: quality\\)"
    ):
        exported(campaign.slug, "--criterion", "naturalness")


# The E2E CrowdFlower layout -----------------------------------------------------------------


def import_export(text: str, name: str = "export.csv") -> Campaign:
    campaign = make_campaign(slug="again")
    import_ratings(campaign, io.BytesIO(text.encode()), name)
    return campaign


def test_export_e2e_needs_a_criterion():
    campaign, *_ = judged_campaign()
    with pytest.raises(CommandError, match="the E2E format holds one criterion"):
        exported(campaign.slug, "--format", "e2e")


def test_export_e2e_has_the_crowdflower_columns_and_counted_hits_only():
    campaign, first, *_ = judged_campaign()
    text = exported(campaign.slug, "--format", "e2e", "--criterion", "quality")
    [row] = csv_rows(text)  # the flagged HIT is left out, as rankings leave it out
    assert row["_worker_id"] == str(first.annotator_id)
    assert row["_id"] == f"hit-{first.hit_id}"
    assert [row[f"quality{i}"] for i in (1, 2, 3)] == ["300", "100", "50"]
    assert [row[f"check{i}"] for i in (1, 2, 3)] == ["ok", "added\nmissing", ""]
    assert row["_trust"] == row["_channel"] == ""


def test_export_e2e_marks_identical_outputs_as_e2e_did():
    campaign = make_campaign()
    item = make_item(campaign)
    outputs = [
        make_output(item, make_system(campaign, name=name), text=text)
        for name, text in [("a", "Same."), ("b", "Other."), ("c", "Same. "), ("d", "Same.")]
    ]
    make_judged_hit(outputs, [10, 20, 10, 10])
    [row] = csv_rows(exported(campaign.slug, "--format", "e2e", "--criterion", "quality"))
    assert [row[f"dupl_ref{i}"] for i in (1, 2, 3, 4)] == ["34.0", "", "14.0", "13.0"]


def test_export_e2e_reads_back_the_same_judgments_and_risky_texts():
    campaign = make_campaign()
    item = make_item(campaign)
    risky = make_output(item, make_system(campaign, name="-cmd"), text="=1+1 is a pub.")
    plain = make_output(item, make_system(campaign, name="plain"), text="A pub.")
    judged = make_judged_hit([risky, plain], [10, 20])
    text = exported(campaign.slug, "--format", "e2e", "--criterion", "quality")
    assert "'=1+1 is a pub." in text and "'-cmd" in text
    again = import_export(text)
    [judgment_a, judgment_b] = Judgment.objects.filter(
        assignment__hit__campaign=again
    ).select_related("slot__output__system", "assignment")
    assert (judgment_a.slot.output.system.name, judgment_a.slot.output.text) == (
        "-cmd",
        "=1+1 is a pub.",
    )
    assert (judgment_a.score, judgment_b.score) == (10, 20)
    assert judgment_a.assignment.started_at == judged.started_at.replace(microsecond=0)


def test_export_e2e_refuses_inputs_other_than_mrs():
    campaign, systems, items = make_system_set(systems=2, items=1)
    item = items[0]
    item.input_kind = "triples"
    item.save()
    make_judged_hit(list(item.outputs.all()), [1, 2])
    with pytest.raises(CommandError, match="E2E meaning representations only"):
        exported(campaign.slug, "--format", "e2e", "--criterion", "quality")


def test_export_e2e_refuses_hits_of_several_sizes():
    campaign, systems, items = make_system_set(systems=3, items=2)
    make_judged_hit(list(items[0].outputs.all()), [1, 2, 3])
    make_judged_hit(list(items[1].outputs.all())[:2], [1, 2])
    with pytest.raises(CommandError, match="HITs of one size; these have 2 to 3 outputs"):
        exported(campaign.slug, "--format", "e2e", "--criterion", "quality")


def ranked(campaign: Campaign) -> list[tuple[str, float]]:
    """Mean mu per system, in the order the ranking numbers the systems."""
    data = load_ranking_input(campaign.criteria.get(name="quality"))
    ranking = summarise(e2e_protocol(data.comparisons, len(data.systems), 10, seed=7))
    names = dict(System.objects.filter(campaign=campaign).values_list("id", "name"))
    return [(names[pk], float(ranking.mean_mu[i])) for i, pk in enumerate(data.systems)]


def test_export_e2e_of_the_published_ratings_imports_to_the_same_ranking(e2e_data):
    call_command(
        "import_ratings",
        "e2e",
        str(e2e_data / "human_ratings" / "quality.csv"),
        "--create-campaign",
    )
    text = exported("e2e", "--format", "e2e", "--criterion", "quality")
    published = (e2e_data / "human_ratings" / "quality.csv").open(encoding="utf-8-sig")
    assert text.splitlines()[0] == published.readline().strip()
    again = import_export(text)
    assert again.hits.count() == 2979 and again.items.count() == 630
    assert ranked(again) == ranked(Campaign.objects.get(slug="e2e"))


# Systems keep their papers' names -------------------------------------------------------------


def test_import_outputs_takes_a_papers_system_name_and_exports_it_as_it_was(tmp_path):
    call_command("demo")
    demo = Campaign.objects.get(slug="demo")
    path = tmp_path / "amazon.tsv"
    path.write_text(
        "MR\toutput\n"
        "name[The Vaults], eatType[restaurant], customer rating[5 out of 5]\tA fine place.\n"
    )
    call_command("import_outputs", "demo", "Amazon_AI_(Shanghai)", str(path), "--create-system")
    amazon = demo.systems.get(name="Amazon_AI_(Shanghai)")
    assert amazon.key == "amazon_ai_shanghai"
    [output] = amazon.outputs.all()
    other = output.item.outputs.exclude(system=amazon).order_by("system__name").first()
    make_judged_hit([output, other], [80, 20])
    text = exported("demo", "--format", "e2e", "--criterion", "quality")
    [row] = csv_rows(text)
    assert row["sys1"] == "Amazon_AI_(Shanghai)"
    again = import_export(text)
    assert again.systems.get(name="Amazon_AI_(Shanghai)").key == "amazon_ai_shanghai"
    rows = csv_rows(exported("demo"))
    assert {r["system"] for r in rows} == {"Amazon_AI_(Shanghai)", other.system.name}
