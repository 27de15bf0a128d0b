"""Direct-assessment ratings in and out (annotation/datafiles/ratings_da.py): what an import
stores, the errors it names, the round trip, and a DA criterion ranked through the sweep
and the worker's task, as RankME's are."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.datafiles import ratings_da
from annotation.datafiles.exporters import export
from annotation.datafiles.ratings_da import import_da_ratings
from annotation.judging import form_named
from annotation.models import Assignment, Campaign, CampaignCriterion, Judgment
from evalsite.datasheet import build_datasheet
from ranking.protocols import PROTOCOLS
from tests.factories import make_output, make_system
from tests.judging_helpers import SYSTEMS, form_world, ranked

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("brief_null_check")]

DA = form_named("da")
# The views that fit the form without a fused judge (the fused view needs one: tests/judges).
DA_VIEWS = [name for name in DA.protocols if not PROTOCOLS[name].uses_judge]
# Per system, a quality that the scores follow with noise: alpha best, delta worst.
LEVEL = {"alpha": 80, "beta": 60, "gamma": 40, "delta": 20}


def ratings_csv(annotators: int = 3, k: int = 3) -> str:
    """Long DA rows: each annotator scores k systems per item on correctness, then
    fluency; an annotator's scores are their own shift of the systems' levels."""
    lines = ["item,system,annotator,criterion,score,hit,seconds"]
    for a in range(annotators):
        for n in range(1, 7):
            shown = [SYSTEMS[(n + a + j) % 4] for j in range(k)]
            for j, system in enumerate(shown):
                correctness = min(100, LEVEL[system] + 5 * a + (n * 7 + j * 3) % 11)
                fluency = min(100, LEVEL[system] // 2 + 10 * a + (n + j) % 5)
                for name, score in (("correctness", correctness), ("fluency", fluency)):
                    lines.append(f"i{n},{system},w{a},{name},{score},h{a}-{n},{30 + n}")
    return "\n".join(lines) + "\n"


def imported(campaign: Campaign, text: str, name: str = "da.csv"):
    return import_da_ratings(campaign, io.BytesIO(text.encode()), name)


def test_import_stores_every_score_and_creates_the_criteria_it_names():
    campaign = form_world()
    summary = imported(campaign, ratings_csv())
    assert "Created the direct-assessment criteria correctness, fluency" in str(summary)
    correctness = campaign.criteria.get(name="correctness")
    fluency = campaign.criteria.get(name="fluency")
    assert correctness.form == fluency.form == DA.name
    assert correctness.settings["also_asks"] == ["fluency"] and not correctness.is_open
    assert Assignment.objects.filter(hit__campaign=campaign).count() == 18
    stored = sorted(
        Judgment.objects.for_criterion(correctness).values_list(
            "assignment__hit__external_id", "slot__output__system__name", "score"
        )
    )
    assert len(stored) == 54 and stored[0] == ("h0-1", "beta", 60 + (7 + 0) % 11)
    # Fluency, asked on correctness's pages, has judgments of its own on those HITs.
    further = Judgment.objects.for_criterion(fluency)
    assert further.count() == 54 and Judgment.objects.count() == 108
    assert not further.exclude(assignment__hit__criterion=correctness).exists()
    one = further.get(assignment__hit__external_id="h2-3", slot__output__system__name="beta")
    assert one.score == 60 // 2 + 20 + (3 + 0) % 5  # item 3, annotator 2: beta is shown first
    assert correctness.judgments_version >= 1


def test_import_refuses_an_item_system_pair_without_output_naming_its_line():
    campaign = form_world()
    # Item i1 has no output of a system named "omega"; another has an output for i1 only.
    other = make_system(campaign, name="omega")
    make_output(campaign.items.get(external_id="i2"), other)
    text = "item,system,annotator,criterion,score\ni1,alpha,w,c,50\ni1,omega,w,c,40\n"
    with pytest.raises(
        Exception,
        match=r"da.csv, line 3, column system: system 'omega' has no output for item 'i1'",
    ):
        imported(campaign, text)
    text = "item,system,annotator,criterion,score\ni1,alpha,w,c,50\ni9,beta,v,c,40\n"
    with pytest.raises(Exception, match=r"line 3, column item: no item 'i9'"):
        imported(campaign, text)
    text = "item,system,annotator,criterion,score\ni1,alpha,w,c,50\ni1,beta,w,c,101\n"
    with pytest.raises(Exception, match=r"line 3, column score: 101 is not from 0 to 100"):
        imported(campaign, text)
    assert not campaign.criteria.filter(name="c").exists()


@pytest.mark.parametrize(
    ("name", "shown", "why"),
    [
        ("<script>", "'<script>'", "Use lowercase letters, digits, '-' and '_' only"),
        ("Bad Name!", "'Bad Name!'", "Use lowercase letters, digits, '-' and '_' only"),
        ("c" * 200, f"'{'c' * 79}…'", "at most 40 characters (it has 200)"),
    ],
)
def test_import_refuses_a_criterion_name_a_criterion_may_not_have(name, shown, why):
    """Issue 39: the DA import made criteria named `<script>` or `Bad Name!`, and a name of
    200 characters ended in a database error (PostgreSQL's varchar(40))."""
    campaign = form_world()
    text = f"item,system,annotator,criterion,score\ni1,alpha,w,c,50\ni1,beta,w,{name},40\n"
    with pytest.raises(ratings_da.DataFileError) as raised:
        imported(campaign, text)
    message = str(raised.value)
    assert message.startswith(f"da.csv, line 3, column criterion: criterion {shown}: ")
    assert why in message
    assert not campaign.criteria.exclude(name__in=["quality", "naturalness"]).exists()
    assert not Judgment.objects.exists()


def stored_scores(campaign: Campaign) -> list[tuple]:
    judged = Judgment.objects.filter(assignment__hit__campaign=campaign)
    return sorted(
        judged.values_list(
            "assignment__hit__external_id",
            "assignment__annotator__external_id",
            "slot__position",
            "slot__output__system__name",
            "criterion__name",
            "score",
        )
    )


def test_import_in_batches_of_a_few_pages_stores_what_one_batch_does(monkeypatch):
    whole = form_world()
    imported(whole, ratings_csv())
    monkeypatch.setattr(ratings_da, "BATCH_ROWS", 4)  # 18 pages: 5 batches
    batched = form_world()
    summary = imported(batched, ratings_csv())
    assert stored_scores(batched) == stored_scores(whole)
    assert summary.created == {
        "annotators": 3,
        "HITs": 18,
        "judgments": 54,
        "further scores": 54,
    }
    assert batched.criteria.get(name="correctness").settings["also_asks"] == ["fluency"]


def test_import_refuses_a_page_whose_rows_are_apart_naming_both_lines():
    campaign = form_world()
    text = (
        "item,system,annotator,criterion,score,hit\n"
        "i1,alpha,w,c,50,h1\n"
        "i2,beta,w,c,40,h2\n"
        "i1,gamma,w,c,30,h1\n"
    )
    with pytest.raises(
        Exception,
        match=r"line 4, column hit: a row of the page that began on line 2, after other pages'",
    ):
        imported(campaign, text)
    assert not Judgment.objects.exists() and not campaign.criteria.filter(name="c").exists()


@pytest.mark.parametrize(
    "rows, message",
    [
        (
            "i1,alpha,w1,c,50,h1\ni1,alpha,w1,c,60,h1\n",
            "line 3, column score: a second score of system alpha on c in the same HIT by the"
            " same annotator \\(line 2\\)",
        ),
        ("i1,alpha,w1,c,50,h1\ni2,alpha,w2,c,60,h1\n", "line 3, column item: HIT h1 has another"),
    ],
)
def test_import_refuses_a_second_score_of_a_hit_naming_both_lines(rows, message):
    campaign = form_world()
    with pytest.raises(ratings_da.DataFileError, match=message):
        imported(campaign, f"item,system,annotator,criterion,score,hit\n{rows}")
    assert not Judgment.objects.exists() and not campaign.criteria.filter(name="c").exists()


def test_import_is_transactional_and_the_command_says_what_it_made(tmp_path):
    campaign = form_world(slug="da-world")
    bad = ratings_csv() + "i1,nobody,w9,correctness,50,hz,1\n"
    path = tmp_path / "bad.csv"
    path.write_text(bad)
    with pytest.raises(CommandError, match="bad.csv, line 110, column system: no system 'nobody'"):
        call_command("import_ratings", "da-world", str(path), "--form", DA.name)
    assert not Judgment.objects.exists()
    assert not campaign.criteria.filter(name="correctness").exists()
    good = tmp_path / "good.csv"
    good.write_text(ratings_csv())
    out = io.StringIO()
    call_command("import_ratings", "da-world", str(good), "--form", DA.name, stdout=out)
    assert "Created the direct-assessment criteria correctness, fluency" in out.getvalue()
    assert Judgment.objects.count() == 2 * 54
    assert Judgment.objects.filter(criterion__name="fluency").count() == 54


def test_da_criteria_are_ranked_by_the_views_that_fit_through_the_worker_path(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    campaign = form_world()
    imported(campaign, ratings_csv())
    rankings = ranked(campaign)
    fitting = sorted(DA_VIEWS)
    assert sorted(rankings) == sorted(
        (criterion, protocol) for criterion in ("correctness", "fluency") for protocol in fitting
    )
    for (criterion, protocol), table in rankings.items():
        assert table[0][0] == "alpha" and table[-1][0] == "delta", (criterion, protocol)


def test_export_then_import_into_a_new_campaign_gives_the_same_rankings(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    first = form_world()
    imported(first, ratings_csv())
    # A page judged on the platform: exported beside the imported ones.
    exported = "".join(export(first, DA.name))
    assert exported.splitlines()[0] == "item,system,annotator,criterion,score,hit,seconds"
    assert len(exported.splitlines()) == 1 + 108
    second = form_world()
    imported(second, exported, name="exported.csv")
    again = "".join(export(second, DA.name))
    # The same rows but the annotators' numbers (rows of another campaign).
    strip = lambda text: [line.split(",")[:2] + line.split(",")[3:] for line in text.splitlines()]  # noqa: E731
    assert strip(again) == strip(exported)
    assert ranked(first) == ranked(second)
    for criterion in ("correctness", "fluency"):
        a = CampaignCriterion.objects.get(campaign=first, name=criterion)
        b = CampaignCriterion.objects.get(campaign=second, name=criterion)
        assert (a.form, a.settings) == (b.form, b.settings)


def test_export_command_writes_the_da_layout(tmp_path):
    campaign = form_world(slug="da-out")
    imported(campaign, ratings_csv(annotators=1))
    out = tmp_path / "out.csv"
    call_command("export_judgments", "da-out", "--format", DA.name, "--out", str(out))
    lines = out.read_text().splitlines()
    assert lines[0] == "item,system,annotator,criterion,score,hit,seconds"
    assert len(lines) == 1 + 36
    item, system, _, criterion, score, hit, seconds = lines[1].split(",")
    assert (item, system, criterion, hit, seconds) == ("i1", "beta", "correctness", "h0-1", "31.0")
    assert lines[2].split(",")[3] == "fluency"


def test_datasheet_words_a_da_criterion_and_its_further_one_as_direct_assessment():
    campaign = form_world()
    imported(campaign, ratings_csv())
    sheet = build_datasheet(campaign)
    sections = {c["criterion"]: c["questions"] for c in sheet["sections"]["4"]["criteria"]}
    assert sorted(sections) == ["correctness", "fluency"]
    for questions in sections.values():
        assert questions["4.3.8"]["answer"].startswith("direct quality estimation")
        assert questions["4.3.4"]["answer"].startswith("0-100, ends labelled")
        assert questions["4.2.2"]["answer"].startswith("absolute")
    pages = sheet["sections"]["3"]["questions"]["3.3.4"]["answer"]
    assert "0-100 slider" in pages


def test_the_results_page_of_a_da_criterion_shows_the_views_that_fit(settings, organiser):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    campaign = form_world()
    imported(campaign, ratings_csv())
    ranked(campaign)
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "fluency"]))
    html = page.content.decode()
    for name, protocol in PROTOCOLS.items():
        assert (protocol.label in html) == (name in DA_VIEWS), name
