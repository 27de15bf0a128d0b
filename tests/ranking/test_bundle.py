"""The bundle (`manage.py bundle`) and ranking again from it alone (`manage.py rank --bundle`)."""

import copy
import hashlib
import io
import json
import os
import re
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotator, Assignment, Campaign
from ranking.bundle.rerank import BundleError, Limits, rerank_bundle
from ranking.bundle.writer import CHECKSUMS, FORMAT, FORMAT_VERSION, JUDGMENTS
from ranking.export import write_csv
from ranking.models import RankingRun
from ranking.protocols import REGISTERED
from ranking.service import execute_run
from tests.factories import make_annotator, make_judged_hit, make_system_set

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("brief_null_check")]

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
        campaign=campaign,
        criterion=campaign.criteria.get(name="quality"),
        protocol=protocol,
        repetitions=20,
        seed=seed,
    )
    assert execute_run(run)
    run.refresh_from_db()
    return run


# The views a bundle ranks again from its judgments: not those that rank a judge's scores,
# which a bundle does not hold (ranking/bundle/writer.py's run_records leaves them out).
BUNDLED = [protocol.name for protocol in REGISTERED if not protocol.uses_judge]
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
    runs = [stored_run(campaign, protocol, seed) for seed, protocol in enumerate(BUNDLED)]
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


@pytest.mark.parametrize("protocol", BUNDLED)
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
    campaign.criteria.filter(name="naturalness").update(question="Is it *natural*?")
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


# Hostile bundles: each refused by name, within seconds and bounded memory -------------------

RUN = {
    "id": 1,
    "criterion": "quality",
    "protocol": "e2e",
    "repetitions": 10,
    "seed": 0,
    "results": [{"system": "a"}, {"system": "b"}],
}


def judgment_line(assignment: int, system: str, score: float, **fields) -> dict:
    record = {"criterion": "quality", "assignment": assignment, "annotator": 1}
    return {**record, "system": system, "score": score, "counted": True, **fields}


JUDGMENT_LINES = [judgment_line(n // 2, "ab"[n % 2], (n * 37) % 100) for n in range(8)]


def jsonl(records) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def base_members(**changed: bytes) -> dict[str, bytes]:
    """A small bundle of format 1 (two systems, four HITs, one run), with members changed."""
    members = {
        "manifest.json": json.dumps({"format": FORMAT, "format_version": FORMAT_VERSION}).encode(),
        "runs.json": json.dumps([RUN]).encode(),
        JUDGMENTS: jsonl(JUDGMENT_LINES),
    }
    return {**members, **changed}


def sealed_bundle(path, members: dict[str, bytes], declared: dict[str, int] | None = None):
    """A bundle of these members with their true SHA-256 in SHA256SUMS; `declared` makes
    the zip's directory state other inflated sizes than the members really have."""
    sums = "".join(
        f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in members.items()
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr(CHECKSUMS, sums)
        for name, size in (declared or {}).items():
            archive.getinfo(name).file_size = size  # written in the directory on closing
    return path


def zeros_bundle(path, name: str, megabytes: int, declared: int | None = None):
    """A real zip bomb: `megabytes` of zeros deflated a thousand to one, written as a
    stream, listed in SHA256SUMS with their true SHA-256."""
    chunk, digest = bytes(1 << 20), hashlib.sha256()
    members = base_members()
    members.pop(name, None)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open(name, "w") as stream:
            for _ in range(megabytes):
                stream.write(chunk)
                digest.update(chunk)
        for other, data in members.items():
            archive.writestr(other, data)
        sums = [f"{hashlib.sha256(data).hexdigest()}  {other}" for other, data in members.items()]
        archive.writestr(CHECKSUMS, "\n".join([*sums, f"{digest.hexdigest()}  {name}"]) + "\n")
        if declared is not None:
            archive.getinfo(name).file_size = declared
    return path


@pytest.fixture
def bounded():
    """Runs a callable under tracemalloc and returns (what it raised, seconds, peak MiB)."""

    def run(call):
        tracemalloc.start()
        started = time.perf_counter()
        try:
            call()
        except (BundleError, CommandError) as error:
            raised = error
        else:
            raised = None
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] / (1 << 20)
        tracemalloc.stop()
        print(f"hostile bundle: {seconds:.3f} s, peak {peak:.1f} MiB: {raised}")
        assert peak < 32, f"{peak:.1f} MiB"
        return raised, seconds, peak

    return run


def test_rank_bundle_small_valid_bundle_is_ranked(tmp_path):
    (reranked,) = rerank_bundle(sealed_bundle(tmp_path / "b.zip", base_members()))
    assert reranked.data.systems == ["a", "b"] and reranked.data.hits == 4


def test_rank_bundle_refuses_a_zip_bomb_by_its_declared_sizes(tmp_path, bounded):
    # A few kB that say they inflate to 3 GB: refused before a byte is inflated.
    for name in ("manifest.json", CHECKSUMS):
        bundle = sealed_bundle(tmp_path / "bomb.zip", base_members(), declared={name: 3 << 30})
        error, _, _ = bounded(lambda bundle=bundle: call_command("rank", "--bundle", str(bundle)))
        assert f"{name}: inflates to 3,221,225,472 bytes, more than the 67,108,864" in str(error)


def test_rank_bundle_refuses_a_zip_bomb_by_its_ratio(tmp_path, bounded):
    bundle = zeros_bundle(tmp_path / "bomb.zip", JUDGMENTS, megabytes=50)
    error, _, _ = bounded(lambda: rerank_bundle(bundle))
    assert "judgments.jsonl: compressed 1,0" in str(error) and "(a zip bomb?)" in str(error)


def test_rank_bundle_refuses_a_document_past_its_cap(tmp_path, bounded):
    # 50 MB of zeros in the manifest, with a 1 MB cap on what is read whole.
    bundle = zeros_bundle(tmp_path / "bomb.zip", "manifest.json", megabytes=50)
    limits = Limits(document_bytes=1 << 20, ratio=10_000)
    error, _, _ = bounded(lambda: rerank_bundle(bundle, limits=limits))
    assert "manifest.json: inflates to 52,428,800 bytes, more than the 1,048,576" in str(error)


def test_rank_bundle_refuses_a_member_holding_more_than_it_declares(tmp_path, bounded):
    # The directory says 1,000 bytes; zipfile inflates no more, and the CRC-32 fails.
    bundle = zeros_bundle(tmp_path / "bomb.zip", JUDGMENTS, megabytes=50, declared=1000)
    error, _, _ = bounded(lambda: rerank_bundle(bundle))
    assert "judgments.jsonl: damaged, cannot be read (Bad CRC-32" in str(error)


def test_rank_bundle_refuses_a_20_gb_member(tmp_path, bounded):
    bundle = sealed_bundle(tmp_path / "big.zip", base_members(), declared={JUDGMENTS: 20 << 30})
    error, _, _ = bounded(lambda: call_command("rank", "--bundle", str(bundle)))
    assert "judgments.jsonl: inflates to 21,474,836,480 bytes, more than the 2,147,483,648" in str(
        error
    )


def test_rank_bundle_refuses_200000_members_before_reading_the_directory(tmp_path, bounded):
    bundle = tmp_path / "many.zip"
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.writestr("m", b"")
        info = archive.getinfo("m")
        for n in range(199_999):  # the directory lists the one member again under new names
            twin = copy.copy(info)
            twin.filename = f"m{n}"
            archive.filelist.append(twin)
    error, _, _ = bounded(lambda: call_command("rank", "--bundle", str(bundle)))
    assert "the zip lists 200,000 members in a directory of 10,4" in str(error)
    assert "a bundle has at most 32 in 65,536 bytes" in str(error)


def test_rank_bundle_refuses_members_listed_twice(tmp_path):
    bundle = sealed_bundle(tmp_path / "b.zip", base_members())
    with zipfile.ZipFile(bundle, "a") as archive, pytest.warns(UserWarning, match="Duplicate"):
        archive.writestr(JUDGMENTS, b"")
    with pytest.raises(BundleError, match="judgments.jsonl: in the bundle more than once"):
        rerank_bundle(bundle)


@pytest.mark.parametrize("repetitions", [10_000_000, 9, 10.5])
def test_rank_bundle_caps_repetitions_as_everywhere(tmp_path, bounded, repetitions):
    runs = json.dumps([{**RUN, "repetitions": repetitions}]).encode()
    bundle = sealed_bundle(tmp_path / "b.zip", base_members(**{"runs.json": runs}))
    error, _, _ = bounded(lambda: rerank_bundle(bundle))
    if isinstance(repetitions, int):
        expected = (
            f"runs.json, run 1: field 'repetitions' is {repetitions:,}, not within 10 to 10,000"
        )
    else:
        expected = "runs.json, run 1: field 'repetitions' is a number, not an integer"
    assert str(error) == expected


def test_rank_bundle_refuses_deep_json(tmp_path, bounded):
    deep = b"[" * 200_000 + b"]" * 200_000
    bundle = sealed_bundle(tmp_path / "b.zip", base_members(**{"runs.json": deep}))
    error, _, _ = bounded(lambda: call_command("rank", "--bundle", str(bundle)))
    assert str(error).endswith("runs.json: not JSON (nested too deeply)")
    lines = jsonl(JUDGMENT_LINES[:2]) + deep + b"\n"
    bundle = sealed_bundle(tmp_path / "c.zip", base_members(**{JUDGMENTS: lines}))
    error, _, _ = bounded(lambda: rerank_bundle(bundle))
    assert str(error) == "judgments.jsonl, line 3: not JSON (nested too deeply)"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("assignment", [1], "field 'assignment' is a list, not an integer"),
        ("annotator", {"a": 1}, "field 'annotator' is an object, not an integer"),
        ("system", ["a"], "field 'system' is a list, not a string"),
        ("score", [50], "field 'score' is a list, not an integer or a number"),
        ("score", True, "field 'score' is a boolean, not an integer or a number"),
        ("counted", "yes", "field 'counted' is a string, not a boolean"),
        ("criterion", ["quality"], "field 'criterion' is a list, not a string"),
    ],
)
def test_rank_bundle_refuses_a_judgment_field_of_the_wrong_type(tmp_path, field, value, expected):
    lines = [*JUDGMENT_LINES[:3], {**JUDGMENT_LINES[3], field: value}]
    bundle = sealed_bundle(tmp_path / "b.zip", base_members(**{JUDGMENTS: jsonl(lines)}))
    with pytest.raises(CommandError) as raised:
        call_command("rank", "--bundle", str(bundle))
    assert str(raised.value) == f"{bundle}: judgments.jsonl, line 4: {expected}"


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        ({**RUN, "criterion": ["quality"]}, "run 1: field 'criterion' is a list, not a string"),
        ({**RUN, "seed": [0]}, "run 1: field 'seed' is a list, not an integer"),
        ({**RUN, "seed": -1}, "run 1: field 'seed' is -1, not within 0 to 2**63 - 1"),
        ({**RUN, "results": {}}, "run 1: field 'results' is an object, not a list"),
        ({**RUN, "results": [{"system": []}]}, "run 1, result 1: field 'system' is a list"),
        ({"id": 1}, "run 1: no field 'criterion'"),
        ("run", "run 1: not a JSON object but a string"),
    ],
)
def test_rank_bundle_refuses_a_run_field_of_the_wrong_type(tmp_path, run, expected):
    runs = json.dumps([run]).encode()
    bundle = sealed_bundle(tmp_path / "b.zip", base_members(**{"runs.json": runs}))
    with pytest.raises(BundleError, match=re.escape(f"runs.json, {expected}")):
        rerank_bundle(bundle)


def test_rank_bundle_refuses_a_line_past_its_cap_and_nan(tmp_path, bounded):
    long_line = jsonl([judgment_line(9, "a", 1, note=os.urandom(1 << 20).hex())])
    bundle = sealed_bundle(tmp_path / "b.zip", base_members(**{JUDGMENTS: long_line}))
    error, _, _ = bounded(lambda: rerank_bundle(bundle))
    assert str(error) == "judgments.jsonl, line 1: longer than the 1,048,576 bytes a line may be"
    nan = jsonl(JUDGMENT_LINES[:1]).replace(b'"score": 0', b'"score": NaN')
    bundle = sealed_bundle(tmp_path / "c.zip", base_members(**{JUDGMENTS: nan}))
    with pytest.raises(BundleError, match="line 1: not JSON \\(NaN is not a JSON number\\)"):
        rerank_bundle(bundle)


def test_rank_bundle_refuses_more_judgments_than_its_cap(tmp_path):
    bundle = sealed_bundle(tmp_path / "b.zip", base_members())
    with pytest.raises(BundleError, match="judgments.jsonl, line 8: more than the 7 judgments"):
        rerank_bundle(bundle, limits=Limits(judgments=7))
