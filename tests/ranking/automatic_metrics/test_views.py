import csv
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Output
from ranking.automatic_metrics.export import CORRELATION_COLUMNS
from ranking.automatic_metrics.models import MetricResult, MetricRun
from ranking.automatic_metrics.service import execute_metric_run
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.factories import make_campaign, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db

# The columns the metrics CSV promises, one row per system.
METRICS_CSV_COLUMNS = [
    "system",
    "bleu",
    "nist",
    "meteor",
    "rouge_l",
    "cider",
    "chrf",
    "normalised_average",
    "slot_outputs",
    "all_realised",
    "added",
    "missing",
    "wrong_value",
    "ser",
]


@pytest.fixture(autouse=True)
def no_java(monkeypatch, tmp_path):
    """Java metrics reported missing, so each test takes a second, not a JVM start."""
    monkeypatch.setenv("PATH", str(tmp_path))


def ranked_and_scored_campaign(names=("sys1", "sys2", "sys3")):
    """sys1 best by the judges; sys1 copies the references, the others drift."""
    campaign, systems, items = make_system_set(systems=3, items=6)
    for system, name in zip(systems, names, strict=True):
        system.name = name
        system.save()
    for index, system in enumerate(systems):
        for output in Output.objects.filter(system=system).select_related("item"):
            reference = output.item.references[0]
            output.text = reference if index == 0 else " ".join(reference.split()[:-index])
            output.save()
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system_id")), [300, 100, 50])
    ranking = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=20, seed=1
    )
    execute_run(ranking)
    execute_metric_run(MetricRun.objects.create(campaign=campaign))
    return campaign


def test_results_page_shows_metrics_correlations_and_scatter_plots(organiser):
    campaign = ranked_and_scored_campaign()
    url = reverse("ranking:results", args=[campaign.slug, "quality"])
    page = organiser.get(url).content.decode()
    section = page[page.index('id="metrics"') :]
    assert "<th>BLEU</th>" in section and "<th>chrF</th>" in section
    assert section.index(">sys1<") < section.index(">sys2<") < section.index(">sys3<")
    assert "meteor not computed: needs Java" in section
    assert "Correlation with the human ranking" in section
    assert ", Calibrated verdict (claims that hold for the whole table)); p-values" in section
    assert section.count("<svg") == 8  # BLEU, NIST, chrF and the five slot measures
    assert "sys1: BLEU 1.0000" in section  # a dot's tooltip
    assert "Download metrics CSV" in section


def test_results_page_without_metrics_offers_to_compute_them(organiser):
    campaign = make_campaign()
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    assert "No automatic metrics yet" in page.content.decode()


def test_compute_queues_a_metric_run(organiser, django_capture_on_commit_callbacks):
    campaign = make_campaign()
    url = reverse("metrics:compute", args=[campaign.slug])
    with django_capture_on_commit_callbacks() as callbacks:
        response = organiser.send("POST", url, {"criterion": "naturalness"})
    assert response.status_code == 302
    assert response["Location"].endswith(f"/results/{campaign.slug}/naturalness/#metrics")
    assert MetricRun.objects.get(campaign=campaign).status == "queued"
    assert len(callbacks) == 1
    page = organiser.get(response["Location"]).content.decode()
    assert "Metric run #" in page and 'http-equiv="refresh"' in page


def test_compute_three_clicks_make_one_metric_run(organiser, django_capture_on_commit_callbacks):
    campaign = make_campaign()
    url = reverse("metrics:compute", args=[campaign.slug])
    with django_capture_on_commit_callbacks() as callbacks:
        for _ in range(3):
            assert organiser.send("POST", url, {"criterion": "quality"}).status_code == 302
    run = MetricRun.objects.get(campaign=campaign)  # one run, not three
    assert run.status == "queued"
    assert len(callbacks) == 1  # and one message to the workers
    # Once it has finished, the next click queues a new run.
    MetricRun.objects.filter(pk=run.pk).update(status="done")
    organiser.send("POST", url, {"criterion": "quality"})
    assert MetricRun.objects.filter(campaign=campaign, status="queued").count() == 1
    assert MetricRun.objects.filter(campaign=campaign).count() == 2


def test_results_page_shows_a_running_metric_runs_progress_and_time_left(organiser):
    campaign = make_campaign()
    started = timezone.now() - timedelta(seconds=60)
    run = MetricRun.objects.create(
        campaign=campaign,
        status="running",
        started_at=started,
        heartbeat_at=timezone.now(),
        progress=2,
        progress_total=6,
        # One system scored 50 s after the start, the second 30 s after it: 4 more at 30 s.
        first_scored=1,
        first_scored_at=timezone.now() - timedelta(seconds=30),
    )
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    status = page.content.decode().split('id="metrics-progress"')[1].split("</div>")[0]
    assert f"Metric run #{run.pk} is running" in status
    assert '<progress max="6" value="2">' in status
    assert "2 of 6 systems scored, about 2 min left." in " ".join(status.split())
    MetricRun.objects.filter(pk=run.pk).update(progress=1)
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    status = page.content.decode().split('id="metrics-progress"')[1].split("</div>")[0]
    assert "1 of 6 systems scored, measuring the pace." in " ".join(status.split())


def test_results_page_says_what_a_metric_run_does_before_its_first_system(organiser):
    campaign = make_campaign()
    MetricRun.objects.create(
        campaign=campaign, status="running", started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    assert "reading the outputs and starting the scorers" in page.content.decode()
    assert "<progress" not in page.content.decode().split('id="metrics"')[1]


def test_compute_outsiders_and_wrong_method(client, organiser):
    campaign = make_campaign()
    url = reverse("metrics:compute", args=[campaign.slug])
    assert organiser.get(url).status_code == 405
    response = client.post(url)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    missing = reverse("metrics:compute", args=["nope"])
    assert organiser.send("POST", missing).status_code == 404
    assert organiser.send("POST", url, {"criterion": "fluency"}).status_code == 400
    assert not MetricRun.objects.exists()


def test_metrics_pages_refuse_staff_without_permission_on_campaigns(clerk, viewer):
    campaign = ranked_and_scored_campaign(names=("sys1", "sys2", "sys3"))
    compute = reverse("metrics:compute", args=[campaign.slug])
    csv_url = reverse("metrics:csv", args=[campaign.slug])
    assert clerk.get(csv_url).status_code == 403
    assert viewer.get(csv_url).status_code == 200
    for person in (clerk, viewer):  # queueing work needs the change permission
        assert person.send("POST", compute, {"criterion": "quality"}).status_code == 403
    assert MetricRun.objects.count() == 1


def read_csv(response) -> list[list[str]]:
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.content.decode())))


def test_metrics_csv_is_one_table_with_the_slot_errors_as_columns(organiser):
    campaign = ranked_and_scored_campaign(names=("sys1", "-cmd", "sys3"))
    response = organiser.get(reverse("metrics:csv", args=[campaign.slug]))
    assert response["Content-Disposition"] == f'attachment; filename="{campaign.slug}-metrics.csv"'
    header, *rows = read_csv(response)
    assert header == METRICS_CSV_COLUMNS
    assert all(len(row) == len(header) for row in rows)  # no blank line, no second table
    by_system = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    assert set(by_system) == {"sys1", "'-cmd", "sys3"}  # a formula-like name is quoted
    sys1 = by_system["sys1"]
    assert sys1["bleu"] == "1.000000" and sys1["meteor"] == ""  # METEOR: no Java
    assert sys1["slot_outputs"] == "6" and sys1["ser"] == "0.000000"


def test_metrics_csv_leaves_slot_columns_empty_without_mr_items(organiser):
    campaign = ranked_and_scored_campaign()
    campaign.items.update(input_kind="document", input_data={"text": "A text.", "question": "?"})
    execute_metric_run(MetricRun.objects.create(campaign=campaign))
    header, *rows = read_csv(organiser.get(reverse("metrics:csv", args=[campaign.slug])))
    assert header == METRICS_CSV_COLUMNS and len(rows) == 3
    assert all(row[header.index("ser")] == "" and row[1] != "" for row in rows)


def test_metrics_correlations_csv_uses_the_calibrated_verdict_whichever_finished_last(
    organiser,
):
    campaign = ranked_and_scored_campaign()
    verdict = RankingRun.objects.get(campaign=campaign)
    # A Bradley-Terry run finishing later is not what the page shows first.
    execute_run(
        RankingRun.objects.create(
            campaign=campaign, criterion=campaign.criteria.get(name="quality"), protocol="bt"
        )
    )
    url = reverse("metrics:correlations_csv", args=[campaign.slug])
    response = organiser.get(url)
    disposition = f'attachment; filename="{campaign.slug}-metric-correlations.csv"'
    assert response["Content-Disposition"] == disposition
    header, *rows = read_csv(response)
    assert header[:5] == ["criterion", "ranking_run", "protocol", "score", "metric"]
    assert {(row[1], row[2], row[3]) for row in rows} == {
        (str(verdict.pk), "calibrated", "strength")
    }
    bleu = next(row for row in rows if row[4] == "bleu")
    assert bleu[0] == "quality" and bleu[5] == "3" and float(bleu[6]) == pytest.approx(1.0)
    ser = next(row for row in rows if row[4] == "ser")
    assert ser[6] == "-0.866025"  # numbers stay numbers, negative or not
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    assert url in page.content.decode()


def test_metrics_correlations_csv_without_a_verdict_has_only_its_header(organiser):
    campaign = ranked_and_scored_campaign()
    RankingRun.objects.filter(campaign=campaign).update(protocol="bt")
    url = reverse("metrics:correlations_csv", args=[campaign.slug])
    assert read_csv(organiser.get(url)) == [CORRELATION_COLUMNS]


def test_metrics_correlations_csv_outsiders_and_wrong_method(client, organiser):
    campaign = make_campaign()
    url = reverse("metrics:correlations_csv", args=[campaign.slug])
    assert organiser.get(url).status_code == 404  # no finished metric run yet
    assert organiser.send("POST", url).status_code == 405
    assert client.get(url).status_code == 302
    missing = reverse("metrics:correlations_csv", args=["nope"])
    assert organiser.get(missing).status_code == 404


def test_metrics_csv_outsiders(client, organiser):
    campaign = make_campaign()
    url = reverse("metrics:csv", args=[campaign.slug])
    assert organiser.get(url).status_code == 404  # no finished run yet
    assert organiser.send("POST", url).status_code == 405
    assert client.get(url).status_code == 302


def test_results_page_shows_the_number_check_for_box_score_items(organiser):
    campaign = ranked_and_scored_campaign()
    game = {
        "home": {"city": "Sacramento", "name": "Kings", "wins": 13, "losses": 18, "pts": 99},
        "visitor": {"city": "Brooklyn", "name": "Nets", "wins": 14, "losses": 16, "pts": 107},
        "players": [],
    }
    campaign.items.update(input_kind="boxscore", input_data=game)
    Output.objects.filter(system__name="sys1").update(text="The Kings (13-18) lost.")
    Output.objects.filter(system__name="sys2").update(text="The Kings (12-19) lost.")
    execute_metric_run(MetricRun.objects.create(campaign=campaign))
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    section = page.content.decode()[page.content.decode().index('id="metrics"') :]
    assert "Numbers in the box score (RotoWire, a relation check)" in section
    table = section[section.index("Numbers in the box score") :]
    assert table.index(">sys1<") < table.index(">sys2<")
    assert '<td class="num">12</td><td class="num">1.000</td>' in table  # 6 items x 2
    assert '<td class="num">12</td><td class="num">0.000</td>' in table
    correlated = section[section.index("Correlation with the human ranking") :]
    assert "<td>Numbers in the box score</td>" in correlated
    assert "<td>Numbers checked</td>" not in correlated  # a count, not a measure of quality


def test_results_page_shows_logicnlgs_bleu_before_any_ranking(organiser):
    """A campaign of table statements, scored, never ranked: BLEU-1/2/3 as LogicNLG's
    Table 2 prints them (x100), systems by BLEU-3, and a caption that says what comes once
    the criterion is ranked; no empty cluster or score column."""
    campaign, systems, items = make_system_set(systems=2, items=3)
    table = {"title": "t", "header": ["team", "wins"], "rows": [["a", "1"], ["b", "2"]]}
    for n, item in enumerate(items):
        item.input_kind, item.input_data = "table", {**table, "statement": n}
        item.references = ["team b has the most wins", "team a has 1 win"]
        item.save()
    Output.objects.filter(system=systems[0]).update(text="team b has the most wins")
    Output.objects.filter(system=systems[1]).update(text="team a has wins")
    execute_metric_run(MetricRun.objects.create(campaign=campaign))
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    section = page.content.decode()[page.content.decode().index('id="metrics"') :]
    assert "No ranking of quality yet" in section
    bleu = section[section.index("BLEU-1/2/3 of statements about tables (LogicNLG)") :]
    header = bleu[: bleu.index("</thead>")]
    assert "<th>BLEU-1 (LogicNLG)</th><th>BLEU-2 (LogicNLG)</th><th>BLEU-3 (LogicNLG)</th>" in (
        header
    )
    assert "<th>#</th>" not in header and "μ" not in header
    rows = bleu[bleu.index("<tbody>") : bleu.index("</tbody>")]
    assert rows.index(f">{systems[0].name}<") < rows.index(f">{systems[1].name}<")
    assert '<td class="num">100.00</td>' in rows  # a copy of a reference: BLEU 1, times 100
    assert "Systems by BLEU-3 (LogicNLG), best first." in bleu
    assert "Correlation with the human ranking" not in section


def test_results_page_shows_a_metric_no_group_holds(organiser):
    campaign = ranked_and_scored_campaign()
    run = MetricRun.objects.get(campaign=campaign)
    system = campaign.systems.get(name="sys1")
    MetricResult.objects.create(run=run, system=system, metric="bertscore", value=0.91, outputs=6)
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    other = page.content.decode().split("<h3>Other metrics</h3>")[1]
    assert "<th>bertscore</th>" in other and '<td class="num">0.9100</td>' in other
