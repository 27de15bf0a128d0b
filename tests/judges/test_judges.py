"""Automatic judges of a criterion: settings, jobs that score outputs (a metric judge, and
an OpenAI-compatible judge against the local fake endpoint), and the judge against the
crowd. Judges never enter HITs."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.models import Hit
from judges.models import Judge, JudgeJob, JudgeScore
from judges.scorers import check_judge_settings, read_score
from judges.service import (
    agreement,
    evidence,
    request_judging,
    run_judge_job,
    unscored_outputs,
)
from tests.client import changelist_rows
from tests.factories import make_annotator, make_judged_hit, make_system_set
from tests.generation.backends.test_openai_backend import server

pytestmark = pytest.mark.django_db
endpoint = server


def judge_of(campaign, **fields) -> Judge:
    fields = {"name": "ser", "kind": "metric", "settings": {"metric": "ser"}, **fields}
    return Judge.objects.create(criterion=campaign.criteria.get(name="quality"), **fields)


def test_a_metric_judge_job_scores_every_output_once_in_batches(
    django_capture_on_commit_callbacks,
):
    campaign, systems, items = make_system_set(systems=3, items=4)
    judge = judge_of(campaign, batch_size=5)
    hits_before = Hit.objects.count()
    with django_capture_on_commit_callbacks() as callbacks:
        job = request_judging(judge)
        assert request_judging(judge) == job  # one job at a time per judge
    assert len(callbacks) == 1 and job.outputs_total == 12
    assert run_judge_job(job)  # what the worker's task calls
    job.refresh_from_db()
    assert (job.status, job.outputs_done, job.outputs_failed) == ("done", 12, 0)
    assert JudgeScore.objects.filter(judge=judge).count() == 12
    # "Output of sys1 for item 7." names none of the MR's values: every slot missed
    assert set(judge.scores.values_list("score", flat=True)) == {-1.0}
    assert Hit.objects.count() == hits_before  # a judge never enters a HIT
    again = request_judging(judge)
    run_judge_job(again)
    again.refresh_from_db()
    assert (again.outputs_total, again.outputs_done) == (0, 0)
    assert JudgeScore.objects.filter(judge=judge).count() == 12


def test_a_metric_judge_scores_a_realised_mr_above_one_that_misses_it():
    campaign, systems, items = make_system_set(systems=2, items=1)
    good, bad = (items[0].outputs.get(system=s) for s in systems)
    good.text = items[0].input_data["attributes"][0][1] + " is a pub by the riverside."
    good.save()
    judge = judge_of(campaign)
    run_judge_job(JudgeJob.objects.create(judge=judge))
    scores = dict(judge.scores.values_list("output_id", "score"))
    assert scores[good.pk] == 0.0 and scores[bad.pk] == -1.0


def test_a_bleu_judge_records_outputs_without_references_as_failures():
    campaign, systems, items = make_system_set(systems=2, items=2)
    items[1].references = []
    items[1].save()
    judge = judge_of(campaign, name="bleu", settings={"metric": "bleu"})
    job = JudgeJob.objects.create(judge=judge)
    assert run_judge_job(job)
    job.refresh_from_db()
    assert (job.status, job.outputs_done, job.outputs_failed) == ("done", 4, 2)
    assert job.output_errors[0][1] == "the item has no references"
    assert judge.scores.count() == 2 and unscored_outputs(judge).count() == 2
    assert not run_judge_job(job)  # claimed once


@pytest.mark.parametrize(
    ("kind", "settings", "message"),
    [
        ("metric", {"metric": "rouge"}, "must be one of bleu, chrf, meteor, ser"),
        ("metric", {"metric": "ser", "lowercase": True}, "'lowercase' is not a known setting"),
        (
            "openai",
            {"base_url": "http://127.0.0.1:1/v1", "model": "m", "rubric": "{input}"},
            "must contain {output}",
        ),
        (
            "openai",
            {"base_url": "http://127.0.0.1:1/v1", "model": "m", "scale": [5, 1]},
            "'scale' must be",
        ),
        ("openai", {"base_url": "http://127.0.0.1:1/v1", "model": "m"}, "not a public"),
        ("transformers", {}, "unknown judge kind 'transformers': use one of metric, openai"),
    ],
)
def test_judge_settings_are_checked_naming_the_setting(kind, settings, message):
    judge = Judge(name="j", kind=kind, settings=settings)
    with pytest.raises(ValidationError, match=message):
        judge.clean()
    with pytest.raises(ValueError, match=message):
        check_judge_settings(kind, settings)


def test_read_score_takes_the_first_number_on_the_scale():
    assert read_score("Score: 73/100", (0, 100)).score == 73.0
    assert "off the scale" in read_score("150", (0, 100)).error
    assert "no number" in read_score("excellent", (0, 100)).error


def test_an_openai_judge_scores_through_the_endpoint_with_its_rubric(endpoint, settings):
    settings.HOSTED_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
    campaign, systems, items = make_system_set(systems=2, items=2)
    first = items[0].outputs.get(system=systems[0])
    first.text = "999 points"
    first.save()
    for n, output in enumerate(items[1].outputs.order_by("id")):
        output.text = f"{60 + n} points"
        output.save()
    judge = judge_of(
        campaign,
        name="llm",
        kind="openai",
        settings={
            "base_url": endpoint.base_url,
            "model": "m",
            "max_retries": 0,
            # the fake endpoint echoes the prompt: the output's number comes first
            "rubric": "{output} -- rate this rendering of: {input}",
        },
    )
    judge.full_clean()
    job = JudgeJob.objects.create(judge=judge)
    assert run_judge_job(job)
    job.refresh_from_db()
    assert job.status == "done" and job.outputs_failed == 1
    assert "999 is off the scale 0-100" in job.output_errors[0][1]
    # "Output of sys2 for item 3." echoed: 2 is its first number
    assert sorted(judge.scores.values_list("score", flat=True)) == [2.0, 60.0, 61.0]
    assert len(endpoint.requests) == 4
    assert "rate this rendering of: name[Place" in endpoint.requests[0]["messages"][-1]["content"]


def crowd_and_judge(items: int = 4):
    """Three systems judged on `items` items by one annotator who prefers system 1 to 2 to
    3 on every item, with some spread between items; a judge that agrees."""
    campaign, systems, item_rows = make_system_set(systems=3, items=items)
    judge = judge_of(campaign, name="oracle", kind="metric")
    annotator = make_annotator(campaign)
    for n, item in enumerate(item_rows):
        outputs = [item.outputs.get(system=s) for s in systems]
        make_judged_hit(outputs, [90.0 - n, 60.0 + n, 30.0 + 2 * n], annotator)
        for rank, output in enumerate(outputs):
            JudgeScore.objects.create(judge=judge, output=output, score=10.0 - 3 * rank + n / 10)
    return judge, systems


def test_agreement_compares_the_judge_with_the_crowds_z_scores():
    judge, _ = crowd_and_judge()
    found = agreement(evidence(judge))
    assert found["outputs"] == 12 and found["systems"] == 3
    assert found["system_spearman"] == pytest.approx(1.0)
    assert found["output_pearson"] > 0.9
    assert found["within_systems_pearson"] is not None


def test_agreement_needs_outputs_scored_by_both():
    campaign, _, _ = make_system_set(systems=2, items=1)
    assert agreement(evidence(judge_of(campaign))) is None


def test_a_judge_job_stores_the_fused_ranking_beside_the_humans_only_one():
    judge, systems = crowd_and_judge(items=6)
    assert run_judge_job(JudgeJob.objects.create(judge=judge))  # nothing left to score
    judge.refresh_from_db()
    assert judge.summary_at is not None
    assert judge.summary["agreement"]["outputs"] == 18
    rows = judge.summary["ranking"]
    assert [row["system"] for row in rows] == [s.name for s in systems]
    for row in rows:
        fused, humans = row["fused"], row["humans"]
        assert fused["lower"] <= fused["mean"] <= fused["upper"]
        # the judge tracks the crowd: a narrower interval, worth more judgments
        assert fused["upper"] - fused["lower"] <= humans["upper"] - humans["lower"] + 1e-9
        assert row["judgments"] == 6 and row["effective_judgments"] >= 6
    assert [row["fused"]["cluster"] for row in rows] == [1, 2, 3]


def test_admin_adds_a_judge_to_a_criterion_and_shows_its_agreement(
    organiser, django_capture_on_commit_callbacks
):
    campaign, _, _ = make_system_set(systems=2, items=2)
    criterion = campaign.criteria.get(name="quality")
    add = reverse("admin:judges_judge_add")
    fields = {"criterion": criterion.pk, "name": "ser", "kind": "metric", "batch_size": 64}
    response = organiser.submit(
        organiser.get(add), {**fields, "settings": '{"metric": "ser"}'}, action=add
    )
    assert response.status_code == 302
    judge = Judge.objects.get(criterion=criterion, name="ser")
    refused = organiser.submit(
        organiser.get(add), {**fields, "settings": '{"metric": "x"}'}, action=add
    )
    assert "must be one of" in refused.content.decode()
    changelist = reverse("admin:judges_judge_changelist")
    with django_capture_on_commit_callbacks() as callbacks:
        organiser.submit(
            organiser.get(changelist),
            {"action": "score_outputs", "_selected_action": [judge.pk]},
            action=changelist,
        )
    assert len(callbacks) == 1
    job = JudgeJob.objects.get(judge=judge)
    assert (job.status, job.outputs_total) == ("queued", 4)
    run_judge_job(job)
    assert judge.scores.count() == 4
    assert changelist_rows(organiser.get(changelist))[0]["scored"] == "4"
    page = organiser.get(reverse("admin:judges_judge_change", args=[judge.pk]))
    assert "not yet: the judge and the crowd" in page.content.decode()


def test_admin_offers_only_the_judge_kinds_it_accepts(organiser):
    campaign, _, _ = make_system_set(systems=2, items=2)
    add = reverse("admin:judges_judge_add")
    page = organiser.get(add)
    offered = [value for value, _ in page.context["adminform"].form.fields["kind"].choices]
    assert offered == ["", "metric", "openai"]
    fields = {"criterion": campaign.criteria.get(name="quality").pk, "name": "local"}
    refused = organiser.submit(
        page, {**fields, "kind": "transformers", "batch_size": 64, "settings": "{}"}, action=add
    )
    assert refused.status_code == 200
    assert "Select a valid choice. transformers is not one of" in refused.content.decode()
    assert not Judge.objects.exists()


def test_admin_shows_the_stored_agreement_and_fused_ranking(organiser):
    judge, systems = crowd_and_judge(items=6)
    run_judge_job(JudgeJob.objects.create(judge=judge))
    page = organiser.get(reverse("admin:judges_judge_change", args=[judge.pk])).content.decode()
    assert "18 outputs of 3 systems" in page
    assert "fused mean (95% interval)" in page and f"<td>{systems[0].name}</td>" in page
