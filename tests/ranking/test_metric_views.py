import csv
import io

import pytest
from django.urls import reverse

from annotation.models import Output
from ranking.metric_models import MetricRun
from ranking.metric_service import execute_metric_run
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.factories import make_campaign, make_judged_hit, make_system_set
from tests.ranking.test_metric_commands import METRICS_CSV_COLUMNS

pytestmark = pytest.mark.django_db


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
        campaign=campaign, criterion="quality", repetitions=20, seed=1
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
    assert section.count("<svg") == 8  # BLEU, NIST, chrF and the five slot measures
    assert "sys1: BLEU 1.0000" in section  # a dot's tooltip
    assert "Download metrics CSV" in section


def test_results_page_without_metrics_offers_to_compute_them(organiser):
    campaign = make_campaign()
    page = organiser.get(reverse("ranking:results", args=[campaign.slug, "quality"]))
    assert "No automatic metrics yet" in page.content.decode()


def test_compute_queues_a_metric_run(organiser, django_capture_on_commit_callbacks):
    campaign = make_campaign()
    url = reverse("ranking:metrics_compute", args=[campaign.slug])
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
    url = reverse("ranking:metrics_compute", args=[campaign.slug])
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


def test_compute_outsiders_and_wrong_method(client, organiser):
    campaign = make_campaign()
    url = reverse("ranking:metrics_compute", args=[campaign.slug])
    assert organiser.get(url).status_code == 405
    response = client.post(url)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    missing = reverse("ranking:metrics_compute", args=["nope"])
    assert organiser.send("POST", missing).status_code == 404
    assert organiser.send("POST", url, {"criterion": "fluency"}).status_code == 400
    assert not MetricRun.objects.exists()


def test_metrics_pages_refuse_staff_without_permission_on_campaigns(clerk, viewer):
    campaign = ranked_and_scored_campaign(names=("sys1", "sys2", "sys3"))
    compute = reverse("ranking:metrics_compute", args=[campaign.slug])
    csv_url = reverse("ranking:metrics_csv", args=[campaign.slug])
    assert clerk.get(csv_url).status_code == 403
    assert viewer.get(csv_url).status_code == 200
    for person in (clerk, viewer):  # queueing work needs the change permission
        assert person.send("POST", compute, {"criterion": "quality"}).status_code == 403
    assert MetricRun.objects.count() == 1


def test_metrics_csv_has_three_tables(organiser):
    campaign = ranked_and_scored_campaign(names=("sys1", "-cmd", "sys3"))
    response = organiser.get(reverse("ranking:metrics_csv", args=[campaign.slug]))
    assert response["Content-Type"].startswith("text/csv")
    blocks = response.content.decode().replace("\r\n", "\n").strip().split("\n\n")
    overlap, slots, correlations = [list(csv.reader(io.StringIO(b))) for b in blocks]
    assert overlap[0] == METRICS_CSV_COLUMNS
    rows = {row[0]: row for row in overlap[1:]}
    assert set(rows) == {"sys1", "'-cmd", "sys3"}  # a formula-like name is quoted
    assert rows["sys1"][1] == "1.000000" and rows["sys1"][3] == ""  # METEOR: no Java
    assert slots[0] == ["system", "outputs", "all_realised", "added", "missing"] + [
        "wrong_value",
        "ser",
    ]
    assert correlations[0][:4] == ["criterion", "ranking_run", "protocol", "metric"]
    bleu = next(row for row in correlations[1:] if row[3] == "bleu")
    assert bleu[0] == "quality" and bleu[4] == "3" and float(bleu[5]) == pytest.approx(1.0)
    ser = next(row for row in correlations[1:] if row[3] == "ser")
    assert ser[5] == "-0.866025"  # numbers stay numbers, negative or not


def test_metrics_csv_outsiders(client, organiser):
    campaign = make_campaign()
    url = reverse("ranking:metrics_csv", args=[campaign.slug])
    assert organiser.get(url).status_code == 404  # no finished run yet
    assert organiser.send("POST", url).status_code == 405
    assert client.get(url).status_code == 302
