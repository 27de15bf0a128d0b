"""The live campaign monitor: its figures on a campaign of known history, and its page."""

import html
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.models import NATURALNESS, QUALITY, Annotator, Assignment
from annotation.monitor import criterion_progress, off_scale_by_annotator
from tests.factories import (
    make_annotator,
    make_assignment,
    make_campaign,
    make_hit,
    make_judged_hit,
    make_system_set,
)

pytestmark = pytest.mark.django_db


def submitted(outputs, now, minutes_ago: float, seconds: float, flag: str = "") -> Assignment:
    assignment = make_judged_hit(outputs, [100] * len(outputs))
    end = now - timedelta(minutes=minutes_ago)
    Assignment.objects.filter(pk=assignment.pk).update(
        started_at=end - timedelta(seconds=seconds), submitted_at=end, flag=flag
    )
    return assignment


@pytest.fixture
def history():
    """Target 10 HITs at 0.50 each: three HITs in the last hour (30, 30 and 90 s, one
    flagged, one by an annotator who failed the attention checks), one five hours ago (60 s);
    one annotator at work, one gone past their time."""
    now = timezone.now()
    campaign = make_campaign(target_hits=10, pay_per_hit=Decimal("0.50"))
    _, _, items = make_system_set(campaign, systems=3, items=6)
    outputs = [list(item.outputs.all()) for item in items]
    careless = submitted(outputs[0], now, minutes_ago=10, seconds=30).annotator
    Annotator.objects.filter(pk=careless.pk).update(failed_attention_at=now)
    submitted(outputs[1], now, minutes_ago=20, seconds=30)
    submitted(outputs[2], now, minutes_ago=40, seconds=90, flag="too_fast")
    submitted(outputs[3], now, minutes_ago=300, seconds=60)
    make_assignment(make_hit(outputs[4]))
    make_assignment(make_hit(outputs[5]), expires_at=now - timedelta(minutes=1))
    imported_hits(campaign, outputs[0], now)
    return campaign, now


def imported_hits(campaign, outputs, now) -> None:
    """Two HITs of imported ratings, slow and in the last hour: in none of the figures."""
    crowd = make_annotator(campaign, source=Annotator.Source.CROWDFLOWER, external_id="cf1")
    for minutes_ago in [5, 15]:
        assignment = make_judged_hit(outputs, [1] * len(outputs), annotator=crowd)
        end = now - timedelta(minutes=minutes_ago)
        Assignment.objects.filter(pk=assignment.pk).update(
            started_at=end - timedelta(seconds=600), submitted_at=end, flag="too_fast"
        )


def test_progress_of_a_criterion_with_known_history(history):
    campaign, now = history
    progress = criterion_progress(campaign.criteria.get(name=QUALITY), now)
    assert (progress.done, progress.target, progress.active_now, progress.last_hour) == (
        4,
        10,
        1,
        3,
    )
    assert progress.imported == 2
    assert progress.median_seconds == 45  # of 30, 30, 90 and 60
    assert progress.flagged_share == 0.25 and progress.failed_share == 0.25
    assert (progress.cost, progress.cost_at_target) == (Decimal("2.00"), Decimal("5.00"))
    assert progress.finish_at == now + timedelta(hours=2)  # 6 more at 3 an hour
    assert len(progress.per_hour) == 24 and sum(n for _, n in progress.per_hour) == 4
    naturalness = criterion_progress(campaign.criteria.get(name=NATURALNESS), now)
    assert (naturalness.done, naturalness.finish_at, naturalness.median_seconds) == (0, None, None)


def test_monitor_page_shows_the_progress_and_refreshes_its_section(organiser, history):
    campaign, _ = history
    url = reverse("admin:annotation_campaign_monitor", args=[campaign.pk])
    page = organiser.get(url).content.decode()
    assert 'id="monitor-progress"' in page and 'fetch("?part=progress"' in page
    section = organiser.get(url, {"part": "progress"}).content.decode()
    assert "<html" not in section
    row = section.split('id="progress-quality"')[1].split("</tr>")[0]
    cells = [
        re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)
    ]
    assert cells[:11] == ["Quality", "4", "2", "10", "1", "3", "45", "25%", "25%", "2.00", "5.00"]
    finish = datetime.strptime(cells[11], "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    expected = timezone.now() + timedelta(hours=2)  # 6 more at 3 an hour, from the page's now
    assert abs(finish - expected) < timedelta(minutes=2)
    assert section.count("<rect") == 48  # 24 hours, two criteria
    # Naturalness had no HITs: its empty chart says so.
    assert section.count("No HITs done here in the last 24 hours.") == 1
    assert "No HITs" not in section.split("Quality: HITs per hour")[1].split("<h2>")[0]


@pytest.mark.parametrize("outsider", ["non_staff", "stranger"])
def test_monitor_is_for_staff_only(request, history, outsider):
    url = reverse("admin:annotation_campaign_monitor", args=[history[0].pk])
    response = request.getfixturevalue(outsider).get(url)
    assert response.status_code == 302 and "/admin/login/" in response.url


def test_progress_of_imported_ratings_only_has_no_times_rate_or_cost():
    now = timezone.now()
    campaign = make_campaign(target_hits=10, pay_per_hit=Decimal("0.50"))
    _, _, items = make_system_set(campaign, systems=3, items=1)
    imported_hits(campaign, list(items[0].outputs.all()), now)
    progress = criterion_progress(campaign.criteria.get(name=QUALITY), now)
    assert (progress.done, progress.imported, progress.last_hour) == (0, 2, 0)
    assert (progress.median_seconds, progress.flagged_share, progress.finish_at) == (None,) * 3
    assert progress.cost == 0 and progress.last_day == 0


def test_monitor_wrong_method_and_unknown_campaign(organiser, history):
    url = reverse("admin:annotation_campaign_monitor", args=[history[0].pk])
    assert organiser.send("POST", url).status_code == 405
    missing = reverse("admin:annotation_campaign_monitor", args=[999])
    assert organiser.get(missing).status_code == 404


def test_monitor_counts_a_criterion_asked_on_another_page_in_that_pages_hits(organiser, history):
    """Quality's DA pages also ask naturalness, which has no HITs of its own: the monitor
    shows quality's row and says where naturalness is asked, instead of an empty row."""
    campaign, _ = history
    campaign.criteria.update(form="da")
    campaign.criteria.filter(name=QUALITY).update(settings={"also_asks": [NATURALNESS]})
    url = reverse("admin:annotation_campaign_monitor", args=[campaign.pk])
    section = organiser.get(url, {"part": "progress"}).content.decode()
    assert 'id="progress-quality"' in section and 'id="progress-naturalness"' not in section
    assert "Asked on another criterion's pages, so counted in its HITs: Naturalness." in section
    assert section.count("<rect") == 24


def test_monitor_lists_the_annotators_of_scores_off_the_scale(organiser, history):
    """Quality's RankME scores above 1,000 (ten times the standard) and a DA criterion's
    above 100, per annotator, most first; annotators without any are not listed."""
    campaign, _ = history
    outputs = list(campaign.items.first().outputs.all())
    crowd = Annotator.objects.get(external_id="cf1")
    make_judged_hit(outputs, [111111, 5656, 1000], annotator=crowd)
    typist = make_annotator(campaign, name="typist")
    make_judged_hit(outputs, [100, 1001, 80], annotator=typist)
    campaign.criteria.filter(name=NATURALNESS).update(form="da")
    make_judged_hit(outputs, [1000, 100, 101], annotator=typist, criterion=NATURALNESS)
    make_judged_hit(outputs, [0, 100, 99], criterion=NATURALNESS)  # all on the slider
    make_judged_hit(outputs, [1000, 1, 99])  # on RankME's scale
    url = reverse("admin:annotation_campaign_monitor", args=[campaign.pk])
    organiser.get(url)  # Django caches content types and such on a first visit
    with CaptureQueriesContext(connection) as queries:
        page = organiser.get(url).content.decode()
    table = page.split('id="off-scale-annotators"')[1].split("</table>")[0]
    rows = [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])
    ]
    assert rows == [["typist", "3", "1,001"], ["crowdflower:cf1", "2", "111,111"]]
    rules = html.unescape(page.split('id="off-scale"')[1].split("</p>")[0])
    assert (
        "Naturalness: outside the slider's 0-100; Quality: above 1,000, ten times the"
        " standard's 100." in rules
    )
    # One aggregate query over the judgments, whatever the number of annotators.
    judgment_queries = [q["sql"] for q in queries if '"annotation_judgment"' in q["sql"]]
    assert len(judgment_queries) == 1 and "GROUP BY" in judgment_queries[0]
    # The section the page fetches again does not count them.
    section = organiser.get(url, {"part": "progress"}).content.decode()
    assert "off the scale" not in section


def test_monitor_without_scores_off_the_scale_says_so(organiser, history):
    campaign, _ = history
    url = reverse("admin:annotation_campaign_monitor", args=[campaign.pk])
    page = organiser.get(url).content.decode()
    assert "No score off the scale." in page and 'id="off-scale-annotators"' not in page


def test_off_scale_counts_cost_one_query_for_any_number_of_annotators(
    django_assert_num_queries, history
):
    campaign, _ = history
    outputs = list(campaign.items.first().outputs.all())
    for _ in range(5):
        make_judged_hit(outputs, [2000, 100, 100])
    with django_assert_num_queries(1):
        found = off_scale_by_annotator(campaign)
    assert [row.scores for row in found] == [1] * 5
