"""The bundle (`manage.py bundle`) and ranking again from it alone (`manage.py rank --bundle`)."""

import hashlib
import io
import json
import zipfile

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotator, Assignment, Campaign
from ranking.bundle import CHECKSUMS, FORMAT, FORMAT_VERSION, JUDGMENTS
from ranking.export import write_csv
from ranking.models import RankingRun
from ranking.protocols import NAMES
from ranking.rerank import rerank_bundle
from ranking.service import execute_run
from tests.factories import make_annotator, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db

MEMBERS = {
    "manifest.json",
    "campaign.json",
    "items.jsonl",
    "systems.jsonl",
    "outputs.jsonl",
    "annotators.jsonl",
    "judgments.jsonl",
    "runs.json",
    "datasheet.json",
    CHECKSUMS,
}


def judged_campaign(hits: int = 24, seed: int = 1) -> Campaign:
    """Four systems judged in random order with ties, by three annotators; one HIT is
    flagged and one annotator excluded, so the bundle must leave them out as rankings do."""
    campaign, _, items = make_system_set(systems=4, items=hits)
    annotators = [make_annotator(campaign, external_id=f"prolific-{n}") for n in range(3)]
    rng = np.random.default_rng(seed)
    for n, item in enumerate(items):
        outputs = list(item.outputs.order_by("system__name"))
        order = rng.permutation(4)
        scores = [int(rng.integers(1, 5)) * 25 for _ in order]
        make_judged_hit([outputs[i] for i in order], scores, annotator=annotators[n % 3])
    flagged = Assignment.objects.filter(hit__campaign=campaign).first()
    Assignment.objects.filter(pk=flagged.pk).update(flag=Assignment.Flag.TOO_FAST)
    Annotator.objects.filter(pk=annotators[2].pk).update(is_excluded=True)
    return campaign


def stored_run(campaign: Campaign, protocol: str = "e2e", seed: int = 7) -> RankingRun:
    run = RankingRun.objects.create(
        campaign=campaign, criterion="quality", protocol=protocol, repetitions=20, seed=seed
    )
    assert execute_run(run)
    run.refresh_from_db()
    return run


FIELDS = ["position", "cluster", "mu", "sigma", "mu_std", "ci_lo", "ci_hi", "rank_lo", "rank_hi"]


def results_of(run: RankingRun) -> dict[str, tuple]:
    rows = run.results.select_related("system")
    return {r.system.name: tuple(getattr(r, field) for field in FIELDS) for r in rows}


def reranked_results(rows) -> dict[str, tuple]:
    return {r.system: tuple(getattr(r, field) for field in FIELDS) for r in rows}


def stored_csv(run: RankingRun) -> str:
    out = io.StringIO()
    write_csv(out, run)
    return out.getvalue()


def test_bundle_round_trip_ranks_identically_without_the_database(tmp_path, capsys):
    campaign = judged_campaign()
    runs = [stored_run(campaign, protocol, seed) for seed, protocol in enumerate(NAMES)]
    assert {run.status for run in runs} == {"done"}
    stored = {run.protocol: (results_of(run), run.pk) for run in runs}
    bundle = tmp_path / "campaign.zip"
    call_command("bundle", campaign.slug, str(bundle))
    Campaign.objects.all().delete()  # the runs and their results go with it
    assert not RankingRun.objects.exists()

    call_command("rank", "--bundle", str(bundle))

    out = capsys.readouterr().out
    for protocol, (results, run_id) in stored.items():
        assert f"Identical to the stored run {run_id}" in out
        (again,) = rerank_bundle(bundle, "quality", protocol)
        assert reranked_results(again.rows) == results  # mean mu, ranges, clusters: exact
        assert again.differences == []


@pytest.mark.parametrize("protocol", NAMES)
def test_rank_bundle_writes_the_csv_of_the_stored_run(tmp_path, protocol):
    campaign = judged_campaign()
    run = stored_run(campaign, protocol)
    expected = stored_csv(run)
    bundle, csv = tmp_path / "campaign.zip", tmp_path / "again.csv"
    call_command("bundle", campaign.slug, str(bundle))
    Campaign.objects.all().delete()
    call_command("rank", "--bundle", str(bundle), "--protocol", protocol, "--csv", str(csv))
    assert csv.read_bytes().decode() == expected


def test_bundle_members_are_listed_with_their_sha256(tmp_path):
    campaign = judged_campaign(hits=6)
    stored_run(campaign)
    bundle = tmp_path / "campaign.zip"
    call_command("bundle", campaign.slug, str(bundle))
    with zipfile.ZipFile(bundle) as archive:
        assert set(archive.namelist()) == MEMBERS
        sums = dict(
            reversed(line.split("  ", 1)) for line in archive.read(CHECKSUMS).decode().splitlines()
        )
        assert set(sums) == MEMBERS - {CHECKSUMS}
        for name, digest in sums.items():
            assert hashlib.sha256(archive.read(name)).hexdigest() == digest
        manifest = json.loads(archive.read("manifest.json"))
    assert (manifest["format"], manifest["format_version"]) == (FORMAT, FORMAT_VERSION)
    assert manifest["members"]["judgments.jsonl"]["rows"] == 6 * 4
    assert manifest["members"]["items.jsonl"]["rows"] == 6
    (run,) = manifest["runs"]
    assert (run["protocol"], run["seed"], run["repetitions"]) == ("e2e", 7, 20)
    assert run["covers_bundle_judgments"]


def test_bundle_judgments_carry_flags_exclusions_and_row_numbers_only(tmp_path):
    campaign = judged_campaign(hits=6)
    bundle = tmp_path / "campaign.zip"
    call_command("bundle", campaign.slug, str(bundle))
    with zipfile.ZipFile(bundle) as archive:
        judgments = [json.loads(line) for line in archive.read(JUDGMENTS).splitlines()]
        everything = b"".join(archive.read(name) for name in archive.namelist())
    assert {j["annotator"] for j in judgments} == set(
        campaign.annotators.values_list("pk", flat=True)
    )
    assert b"prolific-" not in everything  # no platform id of any annotator
    assert campaign.completion_code.encode() not in everything
    flagged = [j for j in judgments if j["flag"] == "too_fast"]
    excluded = [j for j in judgments if j["excluded"]]
    assert len(flagged) == 4 and len(excluded) == 8
    assert all(j["counted"] == (not j["flag"] and not j["excluded"]) for j in judgments)
    assert [j["hit"] for j in judgments] == sorted(j["hit"] for j in judgments)


def test_bundle_settings_hold_the_question_wording_and_items_their_references(tmp_path):
    campaign = judged_campaign(hits=2)
    campaign.criteria.filter(criterion="naturalness").update(question="Is it *natural*?")
    bundle = tmp_path / "campaign.zip"
    call_command("bundle", campaign.slug, str(bundle))
    with zipfile.ZipFile(bundle) as archive:
        settings = json.loads(archive.read("campaign.json"))
        items = [json.loads(line) for line in archive.read("items.jsonl").splitlines()]
        outputs = archive.read("outputs.jsonl").splitlines()
    questions = {c["criterion"]: c["question"] for c in settings["criteria"]}
    assert questions["naturalness"] == "Is it *natural*?"
    assert questions["quality"].startswith("How do you judge the overall quality")
    assert settings["min_seconds_per_hit"] == campaign.min_seconds_per_hit
    assert set(items[0]) == {"id", "kind", "input", "references"}
    assert items[0]["references"] and len(outputs) == 2 * 4


def rewritten(bundle, changed_member: str, change) -> bytes:
    """The bundle written again with one member's bytes changed by `change`."""
    out = io.BytesIO()
    with zipfile.ZipFile(bundle) as old, zipfile.ZipFile(out, "w") as new:
        for name in old.namelist():
            data = old.read(name)
            new.writestr(name, change(data) if name == changed_member else data)
    return out.getvalue()


def one_byte_changed(data: bytes) -> bytes:
    position = data.index(b'"score":') + len(b'"score":')
    return data[:position] + bytes([data[position] ^ 1]) + data[position + 1 :]


def test_rank_bundle_refuses_a_member_changed_by_one_byte(tmp_path):
    campaign = judged_campaign(hits=6)
    stored_run(campaign)
    bundle, tampered = tmp_path / "campaign.zip", tmp_path / "tampered.zip"
    call_command("bundle", campaign.slug, str(bundle))
    tampered.write_bytes(rewritten(bundle, JUDGMENTS, one_byte_changed))
    with pytest.raises(CommandError, match="judgments.jsonl: its SHA-256 is not the one"):
        call_command("rank", "--bundle", str(tampered))


def test_rank_bundle_refuses_a_byte_flipped_in_the_zip_naming_the_member(tmp_path):
    campaign = judged_campaign(hits=6)
    stored_run(campaign)
    bundle = tmp_path / "campaign.zip"
    call_command("bundle", campaign.slug, str(bundle))
    with zipfile.ZipFile(bundle) as archive:
        info = archive.getinfo(JUDGMENTS)
    data = bytearray(bundle.read_bytes())
    # The member's data starts after its 30-byte local header, its name and extra field.
    header = data[info.header_offset : info.header_offset + 30]
    start = info.header_offset + 30 + int.from_bytes(header[26:28], "little")
    start += int.from_bytes(header[28:30], "little")
    data[start + info.compress_size // 2] ^= 0xFF
    bundle.write_bytes(bytes(data))
    with pytest.raises(CommandError, match="judgments.jsonl: damaged"):
        call_command("rank", "--bundle", str(bundle))


def test_rank_bundle_refuses_a_member_the_checksums_do_not_list(tmp_path):
    campaign = judged_campaign(hits=6)
    stored_run(campaign)
    bundle = tmp_path / "campaign.zip"
    call_command("bundle", campaign.slug, str(bundle))
    with zipfile.ZipFile(bundle, "a") as archive:
        archive.writestr("extra.jsonl", "{}\n")
    with pytest.raises(CommandError, match="extra.jsonl: not listed in SHA256SUMS"):
        call_command("rank", "--bundle", str(bundle))


def test_rank_bundle_says_when_judgments_changed_after_the_run(tmp_path, capsys):
    campaign = judged_campaign(hits=6)
    stored_run(campaign)
    item = campaign.items.first()
    make_judged_hit(list(item.outputs.order_by("system__name")), [10, 20, 30, 40])
    bundle = tmp_path / "campaign.zip"
    call_command("bundle", campaign.slug, str(bundle))
    assert "predates the latest judgments" in capsys.readouterr().out
    with pytest.raises(CommandError, match="the judgments changed after this run"):
        call_command("rank", "--bundle", str(bundle))


def test_rank_bundle_without_a_run_of_the_protocol_asked_for(tmp_path):
    campaign = judged_campaign(hits=6)
    stored_run(campaign)
    bundle = tmp_path / "campaign.zip"
    call_command("bundle", campaign.slug, str(bundle))
    with pytest.raises(CommandError, match="no finished run"):
        call_command("rank", "--bundle", str(bundle), "--protocol", "bootstrap")


@pytest.mark.parametrize("extra", [["some-campaign"], ["--seed", "3"], ["--runs", "10"]])
def test_rank_bundle_takes_campaign_seed_and_repetitions_from_the_bundle(tmp_path, extra):
    with pytest.raises(CommandError, match="are the bundle's"):
        call_command("rank", "--bundle", str(tmp_path / "x.zip"), *extra)


def test_rank_bundle_that_is_not_a_zip(tmp_path):
    not_zip = tmp_path / "x.zip"
    not_zip.write_text("hello")
    with pytest.raises(CommandError, match="not a readable zip file"):
        call_command("rank", "--bundle", str(not_zip))


def test_bundle_of_an_unknown_campaign_is_an_error(tmp_path):
    with pytest.raises(CommandError, match="no campaign 'nope'"):
        call_command("bundle", "nope", str(tmp_path / "x.zip"))
    assert list(tmp_path.iterdir()) == []


def test_bundle_round_trip_on_e2e_quality_ratings(e2e_data, tmp_path, capsys):
    call_command(
        "import_ratings",
        "e2e",
        str(e2e_data / "human_ratings" / "quality.csv"),
        "--create-campaign",
    )
    for protocol in ["e2e", "wmt"]:
        call_command("rank", "e2e", "--runs", "10", "--seed", "5", "--protocol", protocol)
    runs = {run.protocol: run for run in RankingRun.objects.all()}
    stored = {protocol: results_of(run) for protocol, run in runs.items()}
    bundle = tmp_path / "e2e.zip"
    call_command("bundle", "e2e", str(bundle))
    Campaign.objects.all().delete()
    capsys.readouterr()

    call_command("rank", "--bundle", str(bundle))

    out = capsys.readouterr().out
    for protocol, run in runs.items():
        assert f"Identical to the stored run {run.pk}" in out
        (again,) = rerank_bundle(bundle, protocol=protocol)
        assert reranked_results(again.rows) == stored[protocol]
        assert len(again.data.comparisons) == 29790
    assert len(stored["e2e"]) == 21
