"""Pairwise preferences in and out (annotation/datafiles/ratings_pairwise.py): what an
import stores, the errors it names, the round trip, and a pairwise criterion (and a
best-worst one) ranked through the sweep and the worker's task, as RankME's are."""

import csv
import io
import re

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.datafiles.exporters import ExportError, export
from annotation.datafiles.ratings_pairwise import import_pairwise_ratings
from annotation.judging import form_named
from annotation.models import Assignment, Campaign, CampaignCriterion, Hit, Judgment
from evalsite.datasheet import build_datasheet
from nlgdata.datafiles import DataFileError
from ranking.agreement.models import RunAgreement
from ranking.bundle.rerank import rerank_bundle
from ranking.service import load_ranking_input
from tests.factories import (
    make_annotator,
    make_hit,
    make_output,
    make_system,
)
from tests.judging_helpers import SYSTEMS, form_world, ranked

pytestmark = pytest.mark.django_db

PAIRWISE = form_named("pairwise")
HEADER = "item,system_a,system_b,annotator,criterion,winner,hit"
# The columns of a ranking compared beside (system, mu, cluster).
RANKS_AND_WINS = ("rank_lo", "rank_hi", "wins", "losses")


def ratings_csv(annotators: int = 3, criterion: str = "coherence") -> str:
    """Every pair of systems on every item by each annotator: the earlier system of SYSTEMS
    mostly wins; one annotator in three ties beta and gamma, one prefers gamma to beta on
    odd items."""
    lines = [HEADER]
    for a in range(annotators):
        for n in range(1, 7):
            for i, first in enumerate(SYSTEMS):
                for second in SYSTEMS[i + 1 :]:
                    winner = "a"
                    if {first, second} == {"beta", "gamma"}:
                        winner = "tie" if a == 1 else ("b" if a == 2 and n % 2 else "a")
                    left, right = (first, second) if (n + a) % 2 else (second, first)
                    if left != first:
                        winner = {"a": "b", "b": "a", "tie": "tie"}[winner]
                    lines.append(
                        f"i{n},{left},{right},w{a},{criterion},{winner},h{a}-{n}-{i}-{second}"
                    )
    return "\n".join(lines) + "\n"


def imported(campaign: Campaign, text: str, name: str = "pairwise.csv"):
    return import_pairwise_ratings(campaign, io.BytesIO(text.encode()), name)


def test_import_stores_a_hit_per_row_scored_as_the_page_stores_a_choice():
    campaign = form_world()
    text = HEADER + "\ni1,alpha,beta,w1,coherence,b,h1\ni2,gamma,delta,w1,coherence,tie,\n"
    summary = imported(campaign, text)
    criterion = campaign.criteria.get(name="coherence")
    assert (criterion.form, criterion.is_open) == (PAIRWISE.name, False)
    assert "Created the pairwise-preference criteria coherence" in str(summary)
    rows = Judgment.objects.order_by("assignment_id", "slot__position").values_list(
        "assignment__hit__external_id", "slot__output__system__name", "score", "criterion"
    )
    assert list(rows) == [
        ("h1", "alpha", 0.0, criterion.pk),
        ("h1", "beta", 1.0, criterion.pk),
        ("pairwise.csv:3", "gamma", 0.5, criterion.pk),
        ("pairwise.csv:3", "delta", 0.5, criterion.pk),
    ]
    assert Assignment.objects.filter(status="submitted").count() == 2


@pytest.mark.parametrize(
    "row, message",
    [
        ("i9,alpha,beta,w1,coherence,a,", "line 3, column item: no item 'i9'"),
        ("i1,alpha,nobody,w1,coherence,a,", "line 3, column system_b: no system 'nobody'"),
        ("i1,alpha,beta,w1,coherence,maybe,", "line 3, column winner: must be a, b or tie"),
        ("i1,alpha,alpha,w1,coherence,a,", "line 3, column system_b: the same system"),
        (
            "i1,beta,alpha,w1,coherence,b,h1",
            "line 3, column hit: HIT h1: annotator w1 .* also on line 2",
        ),
    ],
)
def test_a_bad_row_is_refused_with_its_line_and_nothing_is_written(row, message):
    campaign = form_world()
    text = f"{HEADER}\ni1,alpha,beta,w1,coherence,a,h1\n{row}\n"
    with pytest.raises(DataFileError, match=message):
        imported(campaign, text)
    assert not Judgment.objects.exists()
    assert not campaign.criteria.filter(name="coherence").exists()


def test_a_hit_imported_before_is_refused_for_the_same_worker_criterion_and_pair_only():
    """A HIT id is the crowd platform's task: another worker, criterion or pair of it is
    another page; the same one again is refused, naming its line."""
    campaign = form_world()
    imported(campaign, f"{HEADER}\ni1,alpha,beta,w1,coherence,a,h1\n")
    more = (
        "i1,alpha,beta,w2,coherence,b,h1\ni1,alpha,beta,w1,fluency,a,h1\n"
        "i1,gamma,delta,w1,coherence,tie,h1\n"
    )
    imported(campaign, f"{HEADER}\n{more}", name="more.csv")
    assert Hit.objects.filter(campaign=campaign, external_id="h1").count() == 4
    message = "line 2, column hit: HIT h1 of annotator w1 on coherence with beta and alpha is"
    with pytest.raises(DataFileError, match=message):
        imported(campaign, f"{HEADER}\ni1,beta,alpha,w1,coherence,b,h1\n", name="again.csv")
    assert Judgment.objects.filter(assignment__hit__campaign=campaign).count() == 8


def test_a_pair_whose_system_has_no_output_for_the_item_is_refused():
    campaign = form_world()
    lonely = make_system(campaign, name="lonely")
    make_output(campaign.items.get(external_id="i2"), lonely)
    text = f"{HEADER}\ni2,lonely,alpha,w1,coherence,a,\ni1,lonely,alpha,w1,coherence,a,\n"
    with pytest.raises(
        DataFileError, match="line 3, column system_a: system 'lonely' has no output for item 'i1'"
    ):
        imported(campaign, text)
    assert not Judgment.objects.exists()


def test_a_criterion_of_another_form_is_refused():
    campaign = form_world()
    with pytest.raises(
        DataFileError, match="line 2, column criterion: criterion quality .* rankme"
    ):
        imported(campaign, f"{HEADER}\ni1,alpha,beta,w1,quality,a,\n")


def test_the_command_is_transactional_and_says_what_it_made(tmp_path):
    form_world(slug="pw-world")
    bad = tmp_path / "bad.csv"
    bad.write_text(ratings_csv() + "i1,nobody,alpha,w9,coherence,a,hz\n")
    lines = len(ratings_csv().splitlines()) + 1
    with pytest.raises(
        CommandError, match=f"bad.csv, line {lines}, column system_a: no system 'nobody'"
    ):
        call_command("import_ratings", "pw-world", str(bad), "--form", PAIRWISE.name)
    assert not Judgment.objects.exists()
    assert not CampaignCriterion.objects.filter(name="coherence").exists()
    good = tmp_path / "good.csv"
    good.write_text(ratings_csv())
    out = io.StringIO()
    call_command("import_ratings", "pw-world", str(good), "--form", PAIRWISE.name, stdout=out)
    assert "Created the pairwise-preference criteria coherence" in out.getvalue()
    assert Judgment.objects.count() == 2 * 3 * 6 * 6


def test_pairwise_criterion_is_ranked_by_the_views_that_fit_through_the_worker_path(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    campaign = form_world()
    imported(campaign, ratings_csv())
    rankings = ranked(campaign, *RANKS_AND_WINS)
    assert sorted(rankings) == sorted(("coherence", p) for p in PAIRWISE.protocols)
    for (_, protocol), table in rankings.items():
        assert table[0][0] == "alpha" and table[-1][0] == "delta", protocol
    # Best-worst: alpha won every one of its 3 x 6 x 3 pairs; delta lost every one.
    bws = {row[0]: row for row in rankings[("coherence", "bws")]}
    assert bws["alpha"][1] == 100.0 and bws["alpha"][5:] == (54, 0)
    assert bws["delta"][1] == -100.0 and bws["delta"][5:] == (0, 54)
    # Every other view leaves wins and losses empty.
    assert rankings[("coherence", "e2e")][0][5:] == (None, None)
    # Agreement on the winners (nominal): 36 pairs (item, two systems), each judged by 3.
    agreement = RunAgreement.objects.filter(run__campaign=campaign).first()
    assert agreement.units == 36 and agreement.judgments == 108
    assert agreement.alpha is not None and 0 < agreement.alpha < 1


def test_the_comparisons_are_the_choices_not_the_scores_within_a_page():
    """Best-worst of 4: best > the 3 others, the 2 in the middle > worst, nothing between
    the middle ones (comparisons_from_hits over the scores would tie them)."""
    campaign = form_world()
    criterion = CampaignCriterion.objects.create(
        campaign=campaign, name="bw", form=PAIRWISE.name, settings={"best_worst": 4}, question="?"
    )
    outputs = list(campaign.items.get(external_id="i1").outputs.order_by("system__name"))
    hit = make_hit(outputs, criterion=criterion)  # alpha, beta, delta, gamma
    assignment = Assignment.objects.create(
        hit=hit, annotator=make_annotator(campaign), status="submitted"
    )
    for slot, score in zip(hit.slots.order_by("position"), [1.0, 0.5, 0.0, 0.5], strict=True):
        Judgment.objects.create(assignment=assignment, slot=slot, criterion=criterion, score=score)
    data = load_ranking_input(criterion)
    names = [campaign.systems.get(pk=pk).name for pk in data.systems]
    pairs = sorted(
        (names[w], names[lo], bool(d))
        for w, lo, d in zip(
            data.comparisons.winner, data.comparisons.loser, data.comparisons.draw, strict=True
        )
    )
    assert pairs == [
        ("alpha", "beta", False),
        ("alpha", "delta", False),
        ("alpha", "gamma", False),
        ("beta", "delta", False),
        ("gamma", "delta", False),
    ]
    choices = data.scores.choices
    assert choices is not None and len(choices) == 1
    assert names[int(choices.best[0])] == "alpha" and names[int(choices.worst[0])] == "delta"
    assert np.array_equal(np.sort(choices.shown[0]), np.arange(4))


def test_export_then_import_into_a_new_campaign_gives_the_same_rankings(settings):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    first = form_world()
    imported(first, ratings_csv())
    exported = "".join(export(first, PAIRWISE.name))
    assert exported.splitlines()[0] == HEADER
    assert len(exported.splitlines()) == 1 + 3 * 6 * 6
    second = form_world()
    summary = imported(second, exported, name="exported.csv")
    assert "Created the pairwise-preference criteria coherence" in str(summary)
    again = "".join(export(second, PAIRWISE.name))
    # The same rows but the annotators' numbers (rows of another campaign).
    strip = lambda text: [r[:3] + r[4:] for r in csv.reader(io.StringIO(text))]  # noqa: E731
    assert strip(again) == strip(exported)
    assert ranked(first, *RANKS_AND_WINS) == ranked(second, *RANKS_AND_WINS)


def test_export_refuses_a_best_worst_criterion_of_more_than_two_and_another_form():
    campaign = form_world()
    bw = CampaignCriterion.objects.create(
        campaign=campaign, name="bw", form=PAIRWISE.name, settings={"best_worst": 3}, question="?"
    )
    with pytest.raises(ExportError, match="best and the worst of 3"):
        export(campaign, PAIRWISE.name, bw)
    with pytest.raises(ExportError, match="judged with rankme"):
        export(campaign, PAIRWISE.name, campaign.criteria.get(name="quality"))


def test_export_command_writes_the_pairwise_layout(tmp_path):
    campaign = form_world(slug="pw-out")
    imported(campaign, ratings_csv(annotators=2))
    out = tmp_path / "out.csv"
    call_command("export_judgments", "pw-out", "--format", PAIRWISE.name, "--out", str(out))
    rows = list(csv.reader(out.open()))
    assert rows[0] == HEADER.split(",") and len(rows) == 1 + 72
    assert {r[5] for r in rows[1:]} == {"a", "b", "tie"}


def test_results_page_and_bws_csv_show_the_pairwise_views(settings, organiser):
    settings.RANKING_DEBOUNCE_SECONDS = 0
    campaign = form_world()
    imported(campaign, ratings_csv())
    ranked(campaign)
    results = reverse("ranking:results", args=[campaign.slug, "coherence"])
    html = organiser.get(results).content.decode()
    for protocol in PAIRWISE.protocols:
        assert f"protocol={protocol}" in html
    bws = organiser.get(results, {"protocol": "bws"}).content.decode()
    assert ">Best</th><th" in bws and ">Worst</th>" in bws
    assert re.search(r"<td>alpha</td>\s*<td[^>]*>54</td>\s*<td[^>]*>54</td>\s*<td[^>]*>0</td>", bws)
    response = organiser.get(
        reverse("ranking:csv", args=[campaign.slug, "coherence"]), {"protocol": "bws"}
    )
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert {"system", "score", "wins", "losses", "cluster"} <= set(rows[0])
    assert (rows[0]["system"], rows[0]["wins"], rows[0]["losses"]) == ("alpha", "54", "0")


def test_datasheet_words_the_pairwise_form():
    campaign = form_world()
    imported(campaign, ratings_csv(annotators=1))
    sheet = str(build_datasheet(campaign))
    assert "forced choice with a tie allowed" in sheet


def test_a_bundle_ranks_a_pairwise_criterion_again_from_its_choices(settings, tmp_path):
    """The bundle's re-ranking reads the criterion's form and ranks the choices, as the
    worker did: every view identical to the stored run."""
    settings.RANKING_DEBOUNCE_SECONDS = 0
    campaign = form_world(slug="pw-bundle")
    imported(campaign, ratings_csv())
    ranked(campaign)
    bundle = tmp_path / "pw.zip"
    call_command("bundle", "pw-bundle", str(bundle))
    reranked = rerank_bundle(bundle, "coherence")
    assert sorted(r.run["protocol"] for r in reranked) == sorted(PAIRWISE.protocols)
    for again in reranked:
        assert again.differences == [], again.run["protocol"]
