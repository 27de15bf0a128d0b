from datetime import timedelta

import pytest
from django.utils import timezone

from ranking.automatic_metrics.models import MetricResult, MetricRun
from ranking.automatic_metrics.service import execute_metric_run, latest_metric_run, metric_table
from tests.factories import make_campaign, make_item, make_output, make_system

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_java(monkeypatch, tmp_path):
    """A machine without Java: the Java metrics are reported missing, the rest is fast."""
    monkeypatch.setenv("PATH", str(tmp_path))


def scored_campaign():
    campaign = make_campaign()
    items = [
        make_item(
            campaign,
            input_data={"attributes": [["name", name], ["eatType", "pub"]]},
            input_key=f"name[{name}], eatType[pub]",
            references=[f"{name} is a pub.", f"There is a pub called {name}."],
        )
        for name in ("Zizzi", "Cocum", "Strada")
    ]
    good, bad = make_system(campaign, name="good"), make_system(campaign, name="bad")
    make_system(campaign, name="silent")  # no outputs: not scored
    for item in items:
        name = item.input_data["attributes"][0][1]
        make_output(item, good, text=f"{name} is a pub.")
        make_output(item, bad, text="It is a coffee shop.")
    return campaign


def test_execute_metric_run_stores_a_row_per_system_and_metric(no_java):
    campaign = scored_campaign()
    run = MetricRun.objects.create(campaign=campaign)
    assert execute_metric_run(run)
    run.refresh_from_db()
    assert run.status == "done" and (run.systems, run.outputs) == (2, 6)
    assert (run.progress, run.progress_total) == (2, 2)
    assert set(run.missing) == {"meteor", "rouge_l", "cider", "normalised_average"}
    assert "sacrebleu BLEU" in run.implementations["bleu"]
    stored = {
        (r.system.name, r.metric): (r.value, r.outputs)
        for r in MetricResult.objects.filter(run=run).select_related("system")
    }
    assert {system for system, _ in stored} == {"good", "bad"}
    assert stored[("good", "bleu")] == (pytest.approx(1.0), 3)
    assert stored[("good", "ser")] == (0.0, 3) and stored[("good", "all_realised")][0] == 1.0
    # "It is a coffee shop.": name missing, eatType wrong in every output.
    assert stored[("bad", "ser")][0] == pytest.approx(1.0)
    assert stored[("bad", "wrong_value")][0] == 1.0


def test_metric_table_orders_systems_by_normalised_average_else_name(no_java):
    campaign = scored_campaign()
    execute_metric_run(MetricRun.objects.create(campaign=campaign))
    table = metric_table(latest_metric_run(campaign))
    assert [row.system for row in table.rows] == ["bad", "good"]  # no average without Java
    assert table.metrics == [
        "bleu",
        "nist",
        "chrf",
        "all_realised",
        "added",
        "missing",
        "wrong_value",
        "ser",
    ]


def test_execute_metric_run_leaves_a_run_held_by_another_worker(no_java):
    campaign = scored_campaign()
    run = MetricRun.objects.create(campaign=campaign)
    assert run.claim() is not None  # another worker, heartbeat fresh
    assert not execute_metric_run(MetricRun.objects.get(pk=run.pk))
    assert not MetricResult.objects.exists()


def test_execute_metric_run_without_outputs_fails_with_the_reason():
    run = MetricRun.objects.create(campaign=make_campaign())
    assert execute_metric_run(run)
    run.refresh_from_db()
    assert run.status == "failed" and "no outputs yet" in run.error


def test_metric_run_taken_over_starts_its_progress_again(no_java):
    campaign = scored_campaign()
    run = MetricRun.objects.create(campaign=campaign)
    stale = timezone.now() - timedelta(hours=1)
    MetricRun.objects.filter(pk=run.pk).update(
        status="running", heartbeat_at=stale, progress=1, progress_total=2
    )
    assert execute_metric_run(MetricRun.objects.get(pk=run.pk))
    run.refresh_from_db()
    assert (run.status, run.progress, run.progress_total, run.attempts) == ("done", 2, 2, 1)


def test_metric_run_time_left_at_the_pace_measured_after_the_first_systems():
    """As measured on E2E's 21 systems (docs/organisers.md): the first system was scored
    95 s after the start (reading, tokenising, METEOR loading its tables), each after it
    in about 4 s. The pace of the whole elapsed time said 33 min at one system scored."""
    now = timezone.now()
    run = MetricRun(status="running", started_at=now - timedelta(seconds=95), progress_total=21)
    assert run.seconds_left(now) is None  # nothing scored: nothing measured
    run.progress, run.first_scored, run.first_scored_at = 1, 1, now
    assert run.seconds_left(now) is None  # one system: its time is the start's
    run.progress = 3
    assert run.seconds_left(now + timedelta(seconds=8)) == pytest.approx(18 * 4)
    run.status = "done"
    assert run.seconds_left(now) is None


def test_metric_run_records_when_its_first_systems_were_scored(no_java):
    campaign = scored_campaign()
    run = MetricRun.objects.create(campaign=campaign)
    before = timezone.now()
    assert execute_metric_run(run)
    run.refresh_from_db()
    assert run.first_scored_at is not None and before <= run.first_scored_at <= run.finished_at
    assert 1 <= run.first_scored <= run.progress == 2
    # Taken over by another worker, the run measures its pace again from its own start.
    MetricRun.objects.filter(pk=run.pk).update(status="queued")
    token = MetricRun.objects.get(pk=run.pk).claim(progress=0, first_scored_at=None, first_scored=0)
    assert token is not None
    run.refresh_from_db()
    assert (run.first_scored_at, run.first_scored) == (None, 0)


def test_execute_metric_run_scores_table_items_with_logicnlg_bleu(no_java):
    campaign = make_campaign()
    table = {"title": "t", "header": ["a"], "rows": [["1"]]}
    item = make_item(
        campaign,
        input_kind="table",
        input_data=table,
        input_key="table:t",
        references=["the cat sat on the mat", "a cat is on the mat"],
    )
    mr_item = make_item(campaign)
    system = make_system(campaign, name="tabgen")
    make_output(item, system, text="The cat is on the mat")
    make_output(mr_item, system, text="Something else entirely.")
    run = MetricRun.objects.create(campaign=campaign)
    assert execute_metric_run(run)
    stored = {r.metric: (r.value, r.outputs) for r in MetricResult.objects.filter(run=run)}
    # Only the table item counts: BLEU-1 and -2 are 1, BLEU-3 is (3/4) ** 0.33.
    assert stored["bleu1"] == (pytest.approx(1.0), 1)
    assert stored["bleu3"] == (pytest.approx(0.75**0.33), 1)
    assert stored["bleu"][1] == 2  # sacrebleu's BLEU still scores both outputs
    assert "LogicNLG evaluate.py" in MetricRun.objects.get(pk=run.pk).implementations["bleu1"]
    shown = metric_table(run).metrics
    assert shown[shown.index("bleu1") :][:4] == ["bleu1", "bleu2", "bleu3", "all_realised"]
