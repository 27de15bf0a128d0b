"""The judge against the crowd as a judge job stores it (figures with bootstrap intervals,
bias per system), as the judge's admin page shows it and as its CSV gives it."""

import csv
import io

import numpy as np
import pytest
from django.urls import reverse

from annotation.models import System
from judges.export import COLUMNS, FIGURES
from judges.models import JudgeJob
from judges.service import AGREEMENT_SEED, agreement, evidence, run_judge_job
from ranking.engine.judge_agreement import judge_agreement
from tests.factories import make_annotator, make_judged_hit

from .test_judges import crowd_and_judge, judge_of

pytestmark = pytest.mark.django_db

FORMULA = '=HYPERLINK("http://example.com")'
MARKUP = "<b>bold</b>"


def judged_job():
    judge, systems = crowd_and_judge(items=6)
    run_judge_job(JudgeJob.objects.create(judge=judge))
    judge.refresh_from_db()
    return judge, systems


def test_a_judge_job_stores_each_figure_with_its_interval():
    judge, systems = judged_job()
    found = judge.summary["agreement"]
    assert (found["outputs"], found["systems"], found["items"], found["pairs"]) == (18, 3, 6, 18)
    assert (found["resamples"], found["confidence"]) == (1000, 0.95)
    # The judge orders every pair and every system as the annotator did.
    assert found["pairwise_agreement"] == 1.0
    assert found["system_spearman"] == found["system_kendall"] == 1.0
    for name in FIGURES:
        lower, upper = found["intervals"][name]
        assert lower <= found[name] <= upper, name
    assert [row["system"] for row in found["bias"]] == [s.name for s in systems]
    for row in found["bias"]:
        assert row["outputs"] == 6
        assert row["lower"] <= row["bias"] <= row["upper"]
        assert row["bias"] == pytest.approx(row["judge"] - row["humans"], abs=2e-4)


def test_the_stored_agreement_is_the_engines_on_the_judges_evidence_and_seeded():
    judge, _ = judged_job()
    found = evidence(judge)
    direct = judge_agreement(
        found.output_system,
        found.output_item,
        found.judge,
        found.judged_output,
        found.annotator,
        found.score,
        found.assignment,
        len(found.system_names),
        np.random.default_rng(AGREEMENT_SEED),
    )
    stored = judge.summary["agreement"]
    for name, figure in direct.figures.items():
        assert stored[name] == pytest.approx(figure.value, abs=1e-4)
        assert stored["intervals"][name] == pytest.approx([figure.lower, figure.upper], abs=1e-4)
    first = judge.summary
    run_judge_job(JudgeJob.objects.create(judge=judge))
    judge.refresh_from_db()
    assert judge.summary == first


def test_pairs_are_judged_in_one_hit_by_one_annotator():
    # Two annotators each judge two outputs of an item, in separate HITs: two pairs, not the
    # four that the outputs of one item would make across HITs.
    judge, systems = crowd_and_judge(items=3)
    item = judge.criterion.campaign.items.first()
    outputs = [item.outputs.get(system=s) for s in systems]
    for scores in ([10.0, 20.0], [30.0, 5.0]):
        make_judged_hit(outputs[:2], scores, make_annotator(judge.criterion.campaign))
    found = evidence(judge)
    assert len(set(found.assignment)) == 5
    assert agreement(found)["pairs"] == 3 * 3 + 2


def test_admin_shows_the_figures_with_intervals_and_the_bias_per_system(
    organiser, django_assert_max_num_queries
):
    judge, systems = judged_job()
    System.objects.filter(pk=systems[0].pk).update(name=MARKUP)
    run_judge_job(JudgeJob.objects.create(judge=judge))
    page_address = reverse("admin:judges_judge_change", args=[judge.pk])
    with django_assert_max_num_queries(12):
        page = organiser.get(page_address).content.decode()
    assert "18 outputs of 3 systems, 18 human-judged pairs" in page
    assert "bootstrap over 6 items, 1000 resamples" in page
    judge.refresh_from_db()
    found = judge.summary["agreement"]
    for label, _ in FIGURES.values():
        assert label.replace("'", "&#x27;") in page
    low, high = found["intervals"]["output_pearson"]
    assert f"<td>{found['output_pearson']:.2f}</td><td>({low:.2f} to {high:.2f})</td>" in page
    assert "Bias per system (judge minus humans, z scale)" in page
    assert "<td>&lt;b&gt;bold&lt;/b&gt;</td>" in page and MARKUP not in page
    assert reverse("admin:judges_judge_agreement_csv", args=[judge.pk]) in page


def test_admin_says_when_there_is_no_agreement_yet(organiser):
    campaign = crowd_and_judge(items=1)[0].criterion.campaign
    judge = judge_of(campaign, name="fresh")
    page = organiser.get(reverse("admin:judges_judge_change", args=[judge.pk])).content
    assert b"not yet: the judge and the crowd" in page
    assert b"not yet: run the judge" in page


def read_csv(response) -> list[dict]:
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    text = response.content.decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == COLUMNS and all(len(row) == len(COLUMNS) for row in rows)
    return [dict(zip(COLUMNS, row, strict=True)) for row in rows[1:]]


def test_the_agreement_csv_has_a_row_per_figure_and_per_system_guarded(organiser):
    judge, systems = judged_job()
    campaign = judge.criterion.campaign
    type(campaign).objects.filter(pk=campaign.pk).update(name=FORMULA)
    System.objects.filter(pk=systems[0].pk).update(name="-2+3")
    run_judge_job(JudgeJob.objects.create(judge=judge))
    response = organiser.get(reverse("admin:judges_judge_agreement_csv", args=[judge.pk]))
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="agreement-{judge.name}.csv"'
    rows = read_csv(response)
    assert [row["figure"] for row in rows] == [*FIGURES, "bias", "bias", "bias"]
    assert {row["campaign"] for row in rows} == {"'" + FORMULA}
    assert [row["system"] for row in rows[-3:]] == ["'-2+3", systems[1].name, systems[2].name]
    judge.refresh_from_db()
    found = judge.summary["agreement"]
    pairwise = rows[list(FIGURES).index("pairwise_agreement")]
    assert (pairwise["value"], pairwise["n"], pairwise["counted"]) == ("1.0", "18", "pairs")
    for row in rows:
        assert float(row["lower"]) <= float(row["value"]) <= float(row["upper"])
        assert (row["resamples"], row["confidence"]) == ("1000", "0.95")
    bias = rows[-1]
    assert float(bias["value"]) == found["bias"][-1]["bias"]
    assert float(bias["judge_mean"]) == found["bias"][-1]["judge"]


def test_the_agreement_csv_of_a_constant_judge_leaves_undefined_figures_empty(organiser):
    judge, _ = crowd_and_judge(items=4)
    judge.scores.update(score=5.0)
    run_judge_job(JudgeJob.objects.create(judge=judge))
    rows = read_csv(organiser.get(reverse("admin:judges_judge_agreement_csv", args=[judge.pk])))
    by_figure = {row["figure"]: row for row in rows}
    assert (by_figure["output_pearson"]["value"], by_figure["output_pearson"]["lower"]) == ("", "")
    assert by_figure["pairwise_agreement"]["value"] == "0.5"


def test_the_agreement_csv_action_gives_every_selected_judge(organiser):
    judge, _ = judged_job()
    fresh = judge_of(judge.criterion.campaign, name="fresh")
    changelist = reverse("admin:judges_judge_changelist")
    response = organiser.submit(
        organiser.get(changelist),
        {"action": "download_agreement", "_selected_action": [judge.pk, fresh.pk]},
        action=changelist,
    )
    rows = read_csv(response)
    assert {row["judge"] for row in rows} == {judge.name}  # the fresh one has no figures yet
    assert len(rows) == len(FIGURES) + 3


def test_the_agreement_csv_is_for_staff_only_by_get(organiser, non_staff):
    judge, _ = judged_job()
    address = reverse("admin:judges_judge_agreement_csv", args=[judge.pk])
    assert non_staff.get(address).status_code == 302  # to the admin's login
    assert organiser.get(address.replace(str(judge.pk), str(judge.pk + 100))).status_code == 404
    assert organiser.send("POST", address).status_code == 405


def test_a_summary_stored_before_the_intervals_still_shows_and_exports(organiser):
    judge, _ = crowd_and_judge(items=1)
    judge.summary = {
        "agreement": {
            "outputs": 3,
            "systems": 3,
            "output_pearson": 0.5,
            "within_systems_pearson": None,
            "system_spearman": 1.0,
        }
    }
    judge.save(update_fields=["summary"])
    page = organiser.get(reverse("admin:judges_judge_change", args=[judge.pk])).content.decode()
    assert "3 outputs of 3 systems, - human-judged pairs" in page
    assert "<td>0.50</td><td>-</td>" in page
    rows = read_csv(organiser.get(reverse("admin:judges_judge_agreement_csv", args=[judge.pk])))
    assert [row["figure"] for row in rows] == [
        "system_spearman",
        "output_pearson",
        "within_systems_pearson",
    ]
    assert rows[2]["value"] == "" and rows[0]["value"] == "1.0"
