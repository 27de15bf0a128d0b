"""The campaign's HEDS datasheet: `manage.py datasheet` and the admin's datasheet page."""

import io
import json
import zipfile
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import DEFAULT_QUESTIONS, Annotator, Assignment, Output, Screening
from evalsite.datasheet import build_datasheet
from evalsite.datasheet_markdown import render_markdown
from generation.models import HostedSystem
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.factories import make_annotator, make_campaign, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db

QUESTION = "Which sentence reads best, given the input?"


def evaluated_campaign(**fields):
    """Three systems (one hosted, its outputs generated) judged on four items by a Prolific
    worker and an invited annotator (the first item by both); one HIT too fast, one
    annotator excluded; a finished E2E ranking run with seed 5."""
    campaign, systems, items = make_system_set(make_campaign(**fields), systems=3, items=4)
    campaign.criteria.filter(name="quality").update(question=QUESTION)
    hosted = systems[2]
    Output.objects.filter(system=hosted).update(origin=Output.Origin.GENERATED)
    HostedSystem.objects.create(
        system=hosted,
        backend="openai",
        settings={"model": "tiny", "base_url": "http://10.0.0.5/v1", "api_key_env": "EVAL_SECRET"},
    )
    worker = make_annotator(campaign, external_id="worker-1")
    invited = make_annotator(campaign, source=Annotator.Source.INVITED, external_id="Ann")
    other = make_annotator(campaign, external_id="worker-2", is_excluded=True)
    for n, item in enumerate(items):
        outputs = list(item.outputs.order_by("system__name"))
        make_judged_hit(outputs, [100, 50 + n, 20], annotator=[worker, invited][n % 2])
    # items[0] twice, counted: agreement between annotators has a pair judged twice.
    make_judged_hit(list(items[0].outputs.order_by("system__name")), [90, 60, 30], invited)
    make_judged_hit(list(items[0].outputs.all()), [1, 2, 3], annotator=other)
    fast = make_judged_hit(list(items[1].outputs.all()), [3, 2, 1], annotator=worker)
    Assignment.objects.filter(pk=fast.pk).update(flag=Assignment.Flag.TOO_FAST)
    run = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10, seed=5
    )
    execute_run(run)
    return campaign, run


def questions(sheet, section: str, criterion: str | None = None) -> dict:
    if criterion is None:
        return sheet["sections"][section]["questions"]
    (found,) = [c for c in sheet["sections"][section]["criteria"] if c["criterion"] == criterion]
    return found["questions"]


def test_datasheet_has_the_heds_sections_and_the_campaigns_values():
    campaign, run = evaluated_campaign()
    sheet = build_datasheet(campaign)
    assert sheet["heds_version"] == "3.0"
    assert list(sheet["sections"]) == ["1", "2", "3", "4", "5"]
    # Section 4 is one per criterion evaluated: naturalness has no HITs.
    assert [c["criterion"] for c in sheet["sections"]["4"]["criteria"]] == ["quality"]
    quality = questions(sheet, "4", "quality")
    assert quality["4.3.7"]["answer"] == QUESTION
    (ranking,) = quality["4.3.9"]["facts"]["ranking_runs"]
    assert (ranking["run"], ranking["protocol"], ranking["seed"]) == (run.pk, "calibrated", 5)
    assert ranking["repetitions"] == 10 and ranking["covers_current_judgments"]
    assert quality["4.3.9"]["answer"][0].startswith("calibrated: each annotator's scores as")
    assert quality["4.3.10"]["answer"][0].startswith("calibrated: every two systems' difference")
    assert quality["4.3.11"]["answer"].startswith("Krippendorff's alpha")
    assert quality["4.3.11"]["facts"] == {"run": run.pk}
    sample = questions(sheet, "3")
    assert sample["3.1.1"]["answer"] == {"quality": {"sys1": 4, "sys2": 4, "sys3": 4}}
    assert sample["3.1.1"]["facts"]["items_by_kind"] == {"mr": 4}
    assert sample["3.2.1"]["answer"] == 3
    assert sample["3.2.2"]["facts"]["evaluators_by_source"] == {"invited": 1, "prolific": 2}
    assert sample["3.3.3"]["facts"]["flagged_hits"] == {"too_fast": 1}
    assert sample["3.3.3"]["facts"]["excluded_evaluators"] == 1
    counts = sample["3.3.3"]["facts"]
    assert (counts["judgments_submitted"], counts["judgments_left_out"]) == (21, 6)
    assert (counts["judgments_flagged"], counts["judgments_of_excluded_evaluators"]) == (3, 3)


def test_datasheet_says_how_each_systems_outputs_were_obtained():
    campaign, _ = evaluated_campaign()
    systems = {s["name"]: s for s in build_datasheet(campaign)["sections"]["2"]["systems"]}
    assert (systems["sys1"]["imported"], systems["sys1"]["hosted"]) == (4, None)
    assert (systems["sys3"]["generated"], systems["sys3"]["imported"]) == (4, 0)
    # What generated them, never where the endpoint is or which variable holds its key.
    assert systems["sys3"]["hosted"] == {"backend": "openai", "settings": {"model": "tiny"}}


def test_datasheet_lists_what_is_to_be_filled_by_hand():
    campaign, _ = evaluated_campaign()
    sheet = build_datasheet(campaign)
    to_fill = {(e["id"], e.get("criterion")) for e in sheet["to_be_filled_by_hand"]}
    for expected in ["1.1", "2.4", "3.2.2", "3.2.3", "5.1", "5.2"]:
        assert (expected, None) in to_fill
    assert ("4.3.11", "quality") in to_fill and ("4.3.2", "quality") in to_fill
    assert ("4.3.7", "quality") not in to_fill and ("3.2.1", None) not in to_fill
    assert "pay" in questions(sheet, "3")["3.2.2"]["by_hand"]


def test_datasheet_gives_the_pay_per_hit_and_per_hour_of_the_hits_done_here():
    campaign, _ = evaluated_campaign(pay_per_hit=Decimal("0.30"))
    here = Assignment.objects.filter(hit__campaign=campaign)
    for assignment in here:
        Assignment.objects.filter(pk=assignment.pk).update(
            submitted_at=assignment.started_at + timedelta(seconds=40)
        )
    # An imported HIT's time was spent elsewhere: it does not move the median.
    imported = make_annotator(campaign, source=Annotator.Source.CROWDFLOWER, external_id="cf")
    slow = make_judged_hit(list(campaign.items.first().outputs.all()), [1, 2, 3], imported)
    Assignment.objects.filter(pk=slow.pk).update(
        submitted_at=slow.started_at + timedelta(seconds=600)
    )
    pay = questions(build_datasheet(campaign), "3")["3.2.2"]
    assert pay["answer"] == (
        "paid 0.30 per HIT (in the study's currency), about 27.00 per hour at the median "
        "40 s per HIT"
    )
    assert (pay["facts"]["pay_per_hit"], pay["facts"]["median_seconds_per_hit"]) == ("0.30", 40)
    assert "currency" in pay["by_hand"] and "is 0" not in pay["by_hand"]
    assert "paid 0.30 per HIT" in render_markdown(build_datasheet(campaign))


def test_datasheet_without_pay_leaves_it_to_a_person():
    campaign, _ = evaluated_campaign()
    pay = questions(build_datasheet(campaign), "3")["3.2.2"]
    assert pay["answer"] is None and pay["facts"]["pay_per_hit"] == "0"
    assert "paid or not, and how much (the campaign's pay per HIT is 0)" in pay["by_hand"]


def test_datasheet_names_the_checks_the_campaign_runs_and_who_they_left_out():
    campaign, _ = evaluated_campaign(attention_check_every=4, attention_p_threshold=0.1)
    quality = campaign.criteria.get(name="quality")
    quality.comprehension_check = True
    quality.save(update_fields=["comprehension_check"])
    passed, failed = (make_annotator(campaign, external_id=name) for name in ["p1", "p2"])
    Screening.objects.create(annotator=passed, criterion=quality, attempts=1, passed=True)
    Screening.objects.create(annotator=failed, criterion=quality, attempts=2)
    Annotator.objects.filter(external_id="worker-1").update(
        attention_checks=3, attention_p=0.4, failed_attention_at=timezone.now(), is_excluded=True
    )
    sheet = build_datasheet(campaign)
    checks = questions(sheet, "3")["3.3.3"]
    attention, screening = checks["answer"][1], checks["answer"][2]
    assert attention.startswith("automatic: attention checks: an evaluator's first HIT and one")
    assert "one in every 4" in attention and "p above 0.1 after at least 3 checks" in attention
    assert screening.startswith("screening: comprehension check (quality): before the first")
    assert "attention" not in checks["by_hand"]
    facts = checks["facts"]
    assert facts["attention_checks"] == {
        "evaluators_checked": 1,
        "failed": 1,
        "failed_and_left_out": 1,
    }
    assert facts["excluded_evaluators"] == 2
    assert facts["excluded_because"] == {
        "failed the attention checks": 1,
        "excluded by an organiser": 1,
    }
    recruitment = questions(sheet, "3")["3.2.3"]
    assert recruitment["answer"][-1].startswith("comprehension check (quality)")
    assert recruitment["facts"] == {
        "comprehension_checks": {"quality": {"passed": 1, "screened_out": 1}}
    }
    markdown = render_markdown(sheet)
    assert r"- excluded\_because: failed the attention checks: 1, excluded by an organiser: 1" in (
        markdown
    )


def test_datasheet_of_a_campaign_without_checks_claims_none():
    campaign, _ = evaluated_campaign(attention_check_every=0)
    sheet = build_datasheet(campaign)
    checks = questions(sheet, "3")["3.3.3"]
    methods = " ".join(checks["answer"])
    assert "attention" not in methods and "comprehension" not in methods
    assert "attention_checks" not in checks["facts"]
    assert "facts" not in questions(sheet, "3")["3.2.3"]


def test_datasheet_written_before_any_hit_covers_every_criterion():
    campaign = make_campaign()
    sheet = build_datasheet(campaign)
    naturalness = questions(sheet, "4", "naturalness")
    assert naturalness["4.3.7"]["answer"] == DEFAULT_QUESTIONS["naturalness"]
    assert naturalness["4.3.9"]["by_hand"] == "no finished ranking run yet"
    assert questions(sheet, "4", "quality")["4.1.3"]["answer"].startswith("quality of output rel")


def test_datasheet_says_nothing_to_rank_where_the_results_page_does():
    """Every score 100: E2E ranks all three in one cluster; WMT's view has nothing to
    rank, and the datasheet reports it as its results page does."""
    campaign, _, items = make_system_set(systems=3, items=4)
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [100, 100, 100])
    for protocol in ("wmt", "e2e"):
        run = RankingRun.objects.create(
            campaign=campaign,
            criterion=campaign.criteria.get(name="quality"),
            protocol=protocol,
            repetitions=10,
        )
        execute_run(run)
    wmt, e2e = RankingRun.objects.order_by("pk")
    quality = questions(build_datasheet(campaign), "4", "quality")
    (ranking,) = quality["4.3.9"]["facts"]["ranking_runs"]
    assert (ranking["run"], ranking["protocol"]) == (e2e.pk, "e2e")
    (nothing,) = quality["4.3.9"]["facts"]["nothing_to_rank"]
    assert (nothing["run"], nothing["protocol"]) == (wmt.pk, "wmt")
    assert nothing["reason"].startswith("Nothing to rank: no z-scores yet")
    assert "systems tied in a run share the span of their ranks" in quality["4.3.10"]["answer"][0]
    assert list(e2e.results.values_list("cluster", "rank_lo", "rank_hi")) == [(1, 1, 3)] * 3


def test_datasheet_before_any_ranking_says_there_is_nothing_to_rank():
    campaign, _, _ = make_system_set(systems=3, items=2)
    execute_run(
        RankingRun.objects.create(
            campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
        )
    )
    quality = questions(build_datasheet(campaign), "4", "quality")
    assert quality["4.3.9"]["by_hand"].startswith("no ranking yet: Nothing to rank: no comp")
    assert quality["4.3.10"]["by_hand"] == quality["4.3.9"]["by_hand"]


def test_datasheet_of_imported_ratings_asks_how_they_were_collected(tmp_path):
    campaign = make_campaign()
    ratings = tmp_path / "ratings.csv"
    ratings.write_text(
        "mr,sys1,sys2,ref1,ref2,quality1,quality2,_worker_id,_started_at,_created_at\n"
        '"name[A], eatType[pub]",s1,s2,A is a pub.,A pub.,100,50,w1,'
        "11/28/2017 10:00:00,11/28/2017 10:01:00\n"
    )
    call_command("import_ratings", campaign.slug, str(ratings))
    sample = questions(build_datasheet(campaign), "3")
    assert sample["3.1.2"]["answer"] is None
    assert sample["3.1.2"]["facts"]["imported_ratings_files"] == ["ratings.csv"]
    assert "collected elsewhere" in sample["3.3.4"]["by_hand"]
    assert sample["3.2.3"]["answer"] == ["CrowdFlower (ratings imported from its export): 1"]


def test_datasheet_markdown_renders_every_section_and_the_list_to_fill():
    campaign, _ = evaluated_campaign()
    markdown = render_markdown(build_datasheet(campaign))
    for heading in ["## 1. ", "## 2. ", "## 3. ", "## 4. ", "## 5. ", "## To be filled by hand"]:
        assert heading in markdown
    assert "### Criterion: quality" in markdown
    assert "Which sentence reads best, given the input?" in markdown
    assert "| sys3 |  | 4 | 0 | 4 | backend: openai, settings: model: tiny | yes |" in markdown


def test_datasheet_markdown_escapes_untrusted_text():
    campaign, _ = evaluated_campaign(name="<script>alert(1)</script> **Big**")
    campaign.systems.filter(name="sys1").update(label="[click](https://evil.example) | x")
    campaign.criteria.filter(name="quality").update(question="# Rate\n- it | now")
    markdown = render_markdown(build_datasheet(campaign))
    assert "<script>" not in markdown and "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown
    assert "\\*\\*Big\\*\\*" in markdown
    assert "[click](" not in markdown and "\\[click\\](https://evil.example)" in markdown
    assert "\\| x" in markdown  # a pipe in a label cannot open another table cell
    assert "\n# Rate" not in markdown and "\n- it |" not in markdown
    assert "> \\# Rate" in markdown and "> \\- it \\| now" in markdown


def test_datasheet_command_writes_json_and_markdown(tmp_path, capsys):
    campaign, _ = evaluated_campaign()
    call_command("datasheet", campaign.slug, "--out", str(tmp_path))
    sheet = json.loads((tmp_path / f"{campaign.slug}-datasheet.json").read_text())
    assert questions(sheet, "4", "quality")["4.3.7"]["answer"] == QUESTION
    assert (tmp_path / f"{campaign.slug}-datasheet.md").read_text().startswith("# HEDS 3.0")
    assert "Written" in capsys.readouterr().out


def test_datasheet_command_unknown_campaign_or_a_file_for_folder(tmp_path):
    with pytest.raises(CommandError, match="no campaign 'nope'"):
        call_command("datasheet", "nope")
    campaign = make_campaign()
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(CommandError, match="notes.txt: a file, not a folder"):
        call_command("datasheet", campaign.slug, "--out", str(tmp_path / "notes.txt"))
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_datasheet_command_makes_the_folder_it_writes_into(tmp_path):
    """The README's `datasheet e2e --out reports/` on a fresh clone, which has no reports/."""
    campaign = make_campaign()
    call_command("datasheet", campaign.slug, "--out", str(tmp_path / "reports" / "e2e"))
    written = sorted(path.name for path in (tmp_path / "reports" / "e2e").iterdir())
    assert written == [f"{campaign.slug}-datasheet.json", f"{campaign.slug}-datasheet.md"]


def test_bundle_command_makes_the_folder_of_its_zip(tmp_path):
    campaign = make_campaign()
    call_command("bundle", campaign.slug, str(tmp_path / "bundles" / "b.zip"), stdout=io.StringIO())
    assert (tmp_path / "bundles" / "b.zip").is_file()
    with pytest.raises(CommandError, match="a folder; give the zip file's name"):
        call_command("bundle", campaign.slug, str(tmp_path / "bundles"))


# The admin's datasheet page ------------------------------------------------------------------


def datasheet_url(campaign) -> str:
    return reverse("admin:annotation_campaign_datasheet", args=[campaign.pk])


def test_admin_campaign_list_links_to_the_datasheet(organiser):
    campaign = make_campaign()
    page = organiser.get(reverse("admin:annotation_campaign_changelist")).content.decode()
    assert f'<a href="{datasheet_url(campaign)}">Datasheet</a>' in page


def test_admin_datasheet_downloads_the_markdown(organiser):
    campaign, _ = evaluated_campaign()
    page = organiser.get(datasheet_url(campaign))
    response = organiser.submit(page, {"format": "markdown"}, action=datasheet_url(campaign))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    disposition = f'attachment; filename="{campaign.slug}-datasheet.md"'
    assert response["Content-Disposition"] == disposition
    assert QUESTION in response.content.decode()


def test_admin_datasheet_downloads_a_zip_of_json_and_markdown(organiser):
    campaign, run = evaluated_campaign()
    response = organiser.submit(
        organiser.get(datasheet_url(campaign)), {"format": "zip"}, action=datasheet_url(campaign)
    )
    assert response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = sorted(archive.namelist())
        sheet = json.loads(archive.read(f"{campaign.slug}-datasheet.json"))
    assert names == [f"{campaign.slug}-datasheet.json", f"{campaign.slug}-datasheet.md"]
    (ranking,) = questions(sheet, "4", "quality")["4.3.9"]["facts"]["ranking_runs"]
    assert ranking["run"] == run.pk


@pytest.mark.parametrize("outsider", ["non_staff", "stranger"])
def test_admin_datasheet_is_refused_to_outsiders(request, outsider):
    campaign = make_campaign(name="Secret campaign")
    person = request.getfixturevalue(outsider)
    for response in [
        person.get(datasheet_url(campaign)),
        person.send("POST", datasheet_url(campaign), {"format": "markdown"}),
    ]:
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("admin:login"))
        assert b"Secret campaign" not in response.content


def test_admin_datasheet_post_without_csrf_token_is_refused(organiser):
    campaign = make_campaign()
    assert organiser.post(datasheet_url(campaign), {"format": "markdown"}).status_code == 403


def test_admin_datasheet_wrong_method_and_unknown_campaign(organiser):
    campaign = make_campaign()
    assert organiser.send("PUT", datasheet_url(campaign)).status_code == 405
    missing = reverse("admin:annotation_campaign_datasheet", args=[999])
    assert organiser.get(missing).status_code == 404


def test_admin_datasheet_refuses_an_unknown_format(organiser):
    campaign = make_campaign()
    response = organiser.submit(
        organiser.get(datasheet_url(campaign)), {"format": "pdf"}, action=datasheet_url(campaign)
    )
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert "Select a valid choice" in response.content.decode()
