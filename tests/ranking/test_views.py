"""The results pages, as the organiser reads them (tests/world.py); outsiders are sent to the
admin's login page. The recompute form is submitted from the results page, with its token."""

import csv
import io
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from ranking.agreement.models import RunAgreement
from ranking.claims import claimed_pairs
from ranking.models import RankingRun
from ranking.protocols import NAMES
from ranking.service import execute_run, fitting_protocols
from tests.client import forms_on
from tests.factories import make_annotator, make_campaign, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db


def ranked_campaign(repetitions: int = 20, protocol: str = "calibrated"):
    campaign, systems, items = make_system_set(systems=3, items=6)
    for item in items:
        outputs = list(item.outputs.order_by("system__name"))
        make_judged_hit(outputs, [300, 100, 50])
    run = RankingRun.objects.create(
        campaign=campaign,
        criterion=campaign.criteria.get(name="quality"),
        repetitions=repetitions,
        seed=1,
        protocol=protocol,
    )
    execute_run(run)
    run.refresh_from_db()
    return campaign, run


def results_url(campaign, criterion="quality", name="results"):
    return reverse(f"ranking:{name}", args=[campaign.slug, criterion])


def recompute(person, campaign, data, **extra):
    """Fill in the recompute form of the results page and submit it."""
    page = person.get(results_url(campaign))
    return person.submit(page, data, action=results_url(campaign, name="recompute"), **extra)


def test_results_page_opens_on_the_calibrated_verdict(organiser):
    campaign, run = ranked_campaign()
    page = organiser.get(results_url(campaign)).content.decode()
    assert "18 judgments in 6 HITs" in page and "20 permutations, seed 1" in page
    assert page.index(">sys1<") < page.index(">sys2<") < page.index(">sys3<")
    assert "Calibrated verdict (claims that hold for the whole table)" in page
    assert '<a href="?protocol=calibrated" class="current" aria-current="page">' in page
    assert '?protocol=calibrated" class="current" aria-current="page">Quality</a>' in page
    assert page.count('<p class="tabs">') == 2
    first = run.results.get(position=1)
    assert f'{first.mu:.3f} <span class="muted">± {first.mu_std:.3f}</span>' in page
    # What it could tell apart now, from the pairs the run stored.
    claimed = sum(1 for row in run.pairs["rows"] if row[5])
    assert f"{claimed} of 3 pairs of systems are told apart" in page
    assert "Published procedure" not in page


def test_results_page_shows_the_e2e_view_as_the_published_procedure(organiser):
    campaign, run = ranked_campaign(protocol="e2e")
    ranked_campaign_verdict = RankingRun.objects.create(
        campaign=campaign, criterion=run.criterion, repetitions=20, seed=1
    )
    execute_run(ranked_campaign_verdict)
    ranked_campaign_verdict.refresh_from_db()
    run.refresh_from_db()
    page = organiser.get(results_url(campaign), {"protocol": "e2e"}).content.decode()
    assert "18 judgments in 6 HITs, giving 18" in page
    assert page.index(">sys1<") < page.index(">sys2<") < page.index(">sys3<")
    assert "<svg" in page and "ranks 1–1" in page
    assert "E2E protocol (Sakaguchi" in page
    assert '<a href="?protocol=e2e" class="current" aria-current="page">' in page
    spread = run.results.get(position=1).mu_std
    assert f"± {spread:.3f}" in page  # the spread of mu over runs, not TrueSkill's sigma
    # Labelled as the published procedure, with how often it orders identical systems on
    # this campaign's design, measured when the run was computed.
    assert "<strong>Published procedure:</strong> E2E NLG Challenge 2018" in page
    assert run.null_permutations >= 1
    percent = round(100 * run.null_ordered / run.null_permutations)
    assert f"orders identical systems in\n    <strong>{percent}%</strong>" in page
    assert f"of\n    {run.null_permutations} permutations" in page
    # Where it and the verdict differ: the pairs one orders and the other does not, each once.
    names = dict(run.results.values_list("system_id", "system__name"))
    published = {
        (names[above.pk], names[below.pk])
        for above, below in claimed_pairs(run.results.select_related("system"))
    }
    verdict = {
        (names[a], names[b]) if claimed > 0 else (names[b], names[a])
        for a, b, _, _, _, claimed in ranked_campaign_verdict.pairs["rows"]
        if claimed
    }
    listed = page[page.index('id="verdicts-differ"') :] if published != verdict else ""
    for above, below in published - verdict:
        assert f"{above} › {below}: ordered here, not by the calibrated verdict" in listed
    for above, below in verdict - published:
        assert f"{above} › {below}: ordered by the calibrated verdict, not here" in listed
    for above, below in published & verdict:
        assert f"{above} › {below}:" not in listed


def test_results_page_says_how_many_annotators_did_and_failed_attention_checks(organiser):
    campaign, _ = ranked_campaign()  # imported-like: judged HITs without checks
    campaign.attention_check_every = 5
    campaign.save()
    page = organiser.get(results_url(campaign)).content.decode()
    assert "One HIT in 5 carries a degraded copy" in page
    assert "No annotator has done a check yet" in page
    make_annotator(campaign, attention_checks=4, attention_p=0.02)
    make_annotator(
        campaign, attention_checks=3, attention_p=1.0, failed_attention_at=timezone.now()
    )
    page = organiser.get(results_url(campaign)).content.decode()
    assert "So far 2 annotators did checks,\n  1 failed (0 left out of rankings now)" in page
    campaign.attention_check_every = 0
    campaign.save()
    assert "Attention checks" not in organiser.get(results_url(campaign)).content.decode()


def test_results_page_offers_every_protocol_that_fits_and_says_what_it_is(organiser):
    campaign, _ = ranked_campaign()
    page = organiser.get(results_url(campaign)).content.decode()
    criterion = campaign.criteria.get(name="quality")
    for protocol in NAMES:
        # The views that fit RankME's judgments have a tab; the others (webnlg) none.
        offered = f'href="?protocol={protocol}"' in page
        assert offered == (protocol in fitting_protocols(criterion))
    assert "webnlg" not in fitting_protocols(criterion)
    assert "Bradley-Terry over resampled items (claims that hold for the whole table)" in page
    assert "WMT z-scores with Wilcoxon rank-sum clusters" in page
    assert "The platform&#x27;s verdict: who was preferred within each item" in page


def test_results_page_shows_the_bradley_terry_view(organiser):
    campaign, run = ranked_campaign(protocol="bt")
    page = organiser.get(results_url(campaign), {"protocol": "bt"}).content.decode()
    assert "Bradley-Terry ratings on Chatbot Arena&#x27;s scale" in page
    assert ">BT rating [interval]</th>" in page and "What this view is" in page
    assert "20 resamples of the items, seed 1" in page
    first = run.results.get(position=1)
    assert f"{first.mu:.1f} [{first.ci_lo:.1f}, {first.ci_hi:.1f}]" in page
    assert page.index(">sys1<") < page.index(">sys2<") < page.index(">sys3<")
    assert "Bradley-Terry rating of each system; two intervals apart" in page
    assert "Ranks each system can hold, all at once at 95%" in page  # rank chart
    assert "TrueSkill (mean μ)" not in page
    # sys1 won every comparison: no finite maximum, and the page says so.
    assert "In the comparisons themselves and in all 20 resamples" in page


def test_results_page_shows_the_wmt_view(organiser):
    campaign, run = ranked_campaign(protocol="wmt")
    page = organiser.get(results_url(campaign), {"protocol": "wmt"}).content.decode()
    assert "WMT&#x27;s view: each annotator&#x27;s scores standardised" in page
    assert "<th>Mean z</th>" in page and "one-sided Wilcoxon" in page
    assert "of which\n    18 have a z-score (0 left out" in page
    first = run.results.get(position=1)
    assert f'<td class="num">{first.mu:.3f}</td>' in page
    assert page.index(">sys1<") < page.index(">sys2<") < page.index(">sys3<")
    assert "Wilcoxon clusters</title>" in page
    assert "TrueSkill (mean μ)" not in page


def test_results_page_escapes_system_names(organiser):
    campaign, run = ranked_campaign()
    row = run.results.first()
    row.system.label = "<script>alert(1)</script>"
    row.system.save()
    page = organiser.get(results_url(campaign)).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_results_page_without_runs_offers_recompute(organiser):
    campaign = make_campaign()
    response = organiser.get(results_url(campaign))
    assert "No ranking yet" in response.content.decode()
    recompute_url = results_url(campaign, name="recompute")
    [form] = [form for form in forms_on(response) if form.action == recompute_url]
    assert form.method == "post"
    assert form.fields == ["csrfmiddlewaretoken", "protocol", "repetitions", "seed"]


@pytest.mark.parametrize("outsider", ["stranger", "non_staff"])
def test_results_pages_send_outsiders_to_the_login_page(request, outsider):
    campaign, _ = ranked_campaign()
    someone = request.getfixturevalue(outsider)
    for response in (
        someone.get(results_url(campaign)),
        someone.get(results_url(campaign, name="csv")),
        someone.send("POST", results_url(campaign, name="recompute"), {"protocol": "e2e"}),
    ):
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("admin:login"))
    assert RankingRun.objects.count() == 1


def test_results_pages_refuse_staff_without_permission_on_campaigns(clerk):
    campaign, _ = ranked_campaign()
    data = {"protocol": "bootstrap", "repetitions": 100, "seed": 5}
    for response in (
        clerk.get(results_url(campaign)),
        clerk.get(results_url(campaign, name="csv")),
        clerk.get(reverse("ranking:campaign", args=[campaign.slug])),
        clerk.send("POST", results_url(campaign, name="recompute"), data),
        clerk.send("GET", results_url(campaign, name="recompute")),
    ):
        assert response.status_code == 403
    assert RankingRun.objects.count() == 1


def test_results_pages_let_a_viewer_read_but_not_recompute(viewer):
    campaign, _ = ranked_campaign()
    assert viewer.get(results_url(campaign)).status_code == 200
    assert viewer.get(results_url(campaign, name="csv")).status_code == 200
    data = {"protocol": "bootstrap", "repetitions": 100, "seed": 5}
    assert viewer.send("POST", results_url(campaign, name="recompute"), data).status_code == 403
    assert RankingRun.objects.count() == 1


def test_results_page_of_an_unknown_campaign_or_criterion_is_404(organiser):
    campaign, _ = ranked_campaign()
    assert organiser.get(results_url(campaign, "fluency")).status_code == 404
    assert organiser.get(reverse("ranking:results", args=["nope", "quality"])).status_code == 404


def test_results_page_wrong_method(organiser):
    campaign, _ = ranked_campaign()
    assert organiser.send("POST", results_url(campaign)).status_code == 405
    assert organiser.send("POST", results_url(campaign, name="csv")).status_code == 405
    assert organiser.get(results_url(campaign, name="recompute")).status_code == 405
    assert RankingRun.objects.count() == 1


def test_results_csv_has_header_and_rows_best_first(organiser):
    campaign, run = ranked_campaign()
    response = organiser.get(results_url(campaign, name="csv"))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == [
        "cluster",
        "system",
        "strength",
        "strength_se",
        "ci_lo",
        "ci_hi",
        "rank_lo",
        "rank_hi",
        "comparisons",
    ]
    assert [r[1] for r in rows[1:]] == ["sys1", "sys2", "sys3"]
    assert float(rows[1][2]) > float(rows[2][2]) > float(rows[3][2])
    assert rows[1][8] == "6"  # the calibrated verdict counts each system's judgments


@pytest.mark.parametrize(
    ("protocol", "header"),
    [
        ("bt", ["cluster", "system", "rating", "ci_lo", "ci_hi", "rating_std", "rank_lo"]),
        ("wmt", ["cluster", "system", "mean_raw", "mean_z", "rank_lo", "rank_hi", "judgments"]),
    ],
)
def test_results_csv_of_the_significance_views(organiser, protocol, header):
    campaign, run = ranked_campaign(protocol=protocol)
    response = organiser.get(results_url(campaign, name="csv"), {"protocol": protocol})
    assert f"{campaign.slug}-quality-{protocol}-ranking.csv" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][: len(header)] == header
    assert [r[1] for r in rows[1:]] == ["sys1", "sys2", "sys3"]
    first = run.results.get(position=1)
    # The score column (after mean_raw in the z-score views, whose raw mean is stored too).
    score = rows[0].index("mean_z") if "mean_z" in rows[0] else 2
    assert float(rows[1][score]) == pytest.approx(first.mu, abs=1e-6)
    if "mean_raw" in rows[0]:
        assert first.mean_raw is not None
        assert float(rows[1][rows[0].index("mean_raw")]) == pytest.approx(first.mean_raw)


def test_results_csv_without_a_run_is_404(organiser):
    campaign = make_campaign()
    assert organiser.get(results_url(campaign, name="csv")).status_code == 404


def test_recompute_queues_a_run(organiser, django_capture_on_commit_callbacks):
    campaign, _ = ranked_campaign()
    with django_capture_on_commit_callbacks() as callbacks:
        response = recompute(
            organiser, campaign, {"protocol": "bootstrap", "repetitions": 100, "seed": 5}
        )
    assert response.status_code == 302
    assert response.url == results_url(campaign) + "?protocol=bootstrap"
    run = RankingRun.objects.get(protocol="bootstrap")
    assert (run.status, run.repetitions, run.seed) == ("queued", 100, 5)
    assert len(callbacks) == 1


def test_recompute_clicked_three_times_queues_one_run(
    organiser, django_capture_on_commit_callbacks
):
    campaign, _ = ranked_campaign()
    asked = {"protocol": "bt", "repetitions": 100, "seed": 5}
    with django_capture_on_commit_callbacks() as callbacks:
        for _ in range(3):
            assert recompute(organiser, campaign, asked).status_code == 302
    assert RankingRun.objects.filter(protocol="bt", status="queued").count() == 1
    assert len(callbacks) == 1  # one message to the workers
    # Another computation is another run.
    recompute(organiser, campaign, {**asked, "seed": 6})
    assert RankingRun.objects.filter(protocol="bt", status="queued").count() == 2


@pytest.mark.parametrize("protocol", ["bt", "wmt"])
def test_recompute_queues_a_run_of_a_significance_view(organiser, protocol):
    campaign, _ = ranked_campaign()
    response = recompute(
        organiser, campaign, {"protocol": protocol, "repetitions": 1000, "seed": 2}
    )
    assert response.url == results_url(campaign) + f"?protocol={protocol}"
    run = RankingRun.objects.get(protocol=protocol)
    assert (run.status, run.repetitions, run.seed) == ("queued", 1000, 2)


def test_recompute_without_csrf_token_is_refused(organiser):
    campaign, _ = ranked_campaign()
    data = {"protocol": "bootstrap", "repetitions": 100, "seed": 5}
    assert organiser.post(results_url(campaign, name="recompute"), data).status_code == 403
    assert not RankingRun.objects.filter(protocol="bootstrap").exists()


@pytest.mark.parametrize("repetitions", [0, 9, 10_001, 10**9])
def test_recompute_rejects_bad_numbers(organiser, repetitions):
    campaign, _ = ranked_campaign()
    response = recompute(
        organiser, campaign, {"protocol": "e2e", "repetitions": repetitions, "seed": 5}
    )
    assert response.status_code == 400
    assert RankingRun.objects.count() == 1


def test_results_page_charts_judgments_used_and_left_out(organiser):
    campaign, run = ranked_campaign()
    flagged = campaign.hits.first().assignments.get()
    flagged.flag = "too_fast"
    flagged.save()
    page = organiser.get(results_url(campaign)).content.decode()
    assert ">6</text>" in page  # as the run counted them: 6 judgments each, none flagged
    # The next run (the sweep's, after the flag) counts again; the page reads its counts.
    execute_run(
        RankingRun.objects.create(
            campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
        )
    )
    with CaptureQueriesContext(connection) as queries:
        page = organiser.get(results_url(campaign)).content.decode()
    assert "Judgments so far" in page
    assert ">5 + 1</text>" in page  # each system: 5 judgments used, 1 in the flagged HIT
    assert not [q for q in queries if "annotation_judgment" in q["sql"]]  # none counted here


def test_results_page_shows_an_abandoned_run_as_lost_not_as_current(organiser):
    campaign, finished = ranked_campaign()
    long_ago = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    RankingRun.objects.create(
        campaign=campaign,
        criterion=campaign.criteria.get(name="quality"),
        status="running",
        repetitions=10_000,
        progress=1_000,
        heartbeat_at=long_ago,
    )
    page = organiser.get(results_url(campaign)).content.decode()
    assert "lost its worker at 1000 of" in page
    assert 'http-equiv="refresh"' not in page  # nothing is in progress
    assert f"Ranking run #{finished.pk}" not in page
    assert page.index(">sys1<") < page.index(">sys2<")  # the finished results stay


def test_results_page_shows_the_agreement_stored_with_the_run(organiser):
    campaign, run = ranked_campaign()
    # A second annotator ranks each item's outputs in the opposite order.
    other = make_annotator(campaign)
    for item in campaign.items.all():
        make_judged_hit(list(item.outputs.order_by("system__name")), [50, 100, 300], other)
    run = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
    )
    execute_run(run)
    agreement = RunAgreement.objects.get(run=run)
    page = organiser.get(results_url(campaign)).content.decode()
    assert f"Krippendorff's α = <strong>{agreement.alpha:.3f}</strong>" in page
    assert f"(95% interval {agreement.alpha_low:.3f} to {agreement.alpha_high:.3f})" in page
    assert "on 18 (item, system) pairs judged by two annotators or more" in page
    per_annotator = reverse("admin:agreement_annotatoragreement_changelist")
    assert f'href="{per_annotator}?run__id__exact={run.pk}"' in page


def test_results_page_without_pairs_judged_twice_says_alpha_is_not_defined(organiser):
    campaign, _ = ranked_campaign()
    page = organiser.get(results_url(campaign)).content.decode()
    assert "Krippendorff's α is not defined yet" in page


def test_results_page_shows_a_run_with_nothing_to_rank_as_the_campaigns_state(organiser, caplog):
    campaign, _, _ = make_system_set(systems=3, items=2)
    run = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
    )
    with caplog.at_level("INFO"):
        assert execute_run(run)
    run.refresh_from_db()
    # A state of the campaign, not a fault: done, without results, said at INFO.
    assert run.status == "done" and run.found_nothing_to_rank and run.error == ""
    assert run.note.startswith("Nothing to rank: no comparisons yet")
    assert "judgments of at least two systems that count (in HITs not flagged" in run.note
    assert not run.results.exists() and RankingRun.objects.finished().count() == 0
    assert [record.levelname for record in caplog.records if "Nothing to rank" in record.message]
    assert not [record for record in caplog.records if record.levelname in ("ERROR", "WARNING")]
    page = organiser.get(results_url(campaign)).content.decode()
    assert 'id="nothing-to-rank" role="status">Nothing to rank: no comparisons yet' in page
    assert "No order is claimed" in page
    assert 'class="card error"' not in page and "No ranking yet" not in page
    csv_response = organiser.get(results_url(campaign, name="csv"))
    assert csv_response.status_code == 404


def test_results_page_without_a_run_points_to_the_recompute_form_below(organiser):
    campaign = make_campaign()
    page = organiser.get(results_url(campaign)).content.decode()
    assert "or now:" not in page
    assert '<a href="#recompute">queue a ranking run</a> (at the bottom of this page)' in page
    assert '<h2 id="recompute">Recompute</h2>' in page


@pytest.mark.parametrize("protocol", NAMES)
def test_all_tied_judgments_are_one_cluster_or_nothing_to_rank_on_page_and_csv(organiser, protocol):
    """Every counted score 100: one cluster ranked 1 to 3 in every view but WMT's, and the
    forecast (of the views that resample) separates nothing; WMT has no z-scores and says
    there is nothing to rank."""
    campaign, systems, items = make_system_set(systems=3, items=6)
    for item in items:
        make_judged_hit(list(item.outputs.order_by("system__name")), [100, 100, 100])
    run = RankingRun.objects.create(
        campaign=campaign,
        criterion=campaign.criteria.get(name="quality"),
        protocol=protocol,
        repetitions=40,  # the calibrated verdict claims nothing under 39
    )
    execute_run(run)
    run.refresh_from_db()
    page = organiser.get(results_url(campaign), {"protocol": protocol}).content.decode()
    csv_response = organiser.get(results_url(campaign, name="csv"), {"protocol": protocol})
    if protocol in ("wmt", "fused"):  # no z-scores; and no fused judge (tests/judges)
        assert run.status == "done" and run.found_nothing_to_rank
        assert 'id="nothing-to-rank"' in page and csv_response.status_code == 404
        return
    stored = list(run.results.values_list("cluster", "rank_lo", "rank_hi"))
    assert stored == [(1, 1, 3)] * 3
    rows = list(csv.reader(io.StringIO(csv_response.content.decode())))[1:]
    assert [(int(r[0]), int(r[-3]), int(r[-2])) for r in rows] == stored
    assert page.count('class="cluster-start"') == 1 or protocol == "bt"
    assert "The clusters look settled" not in page and ">yes</td>" not in page
    if protocol == "calibrated":  # the forecast reads the calibrated verdict
        assert "No pair of neighbours is told apart" in page


def test_results_page_shows_the_forecast_and_how_the_hits_were_composed(organiser):
    campaign, systems, items = make_system_set(systems=3, items=12)
    for n, item in enumerate(items):
        outputs = list(item.outputs.order_by("system__name"))
        hit = make_judged_hit(outputs, [300, 100, 100]).hit  # sys2 and sys3 always tie
        hit.composition = "active" if n % 4 else "balanced"
        hit.save(update_fields=["composition"])
    run = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=50, seed=1
    )
    execute_run(run)
    run.refresh_from_db()
    assert run.hits_per_composition == {"active": 9, "balanced": 3}
    page = organiser.get(results_url(campaign)).content.decode()
    assert "What more judgments would settle" in page
    assert "sys1 › " in page
    assert "look tied at the current rate" in page  # sys2 and sys3
    assert "Active: the systems that more judgments can tell apart: 9 HITs (75%)" in page
    assert "Balanced: the least judged systems: 3 HITs (25%)" in page


def test_ranking_run_resets_the_online_estimate(organiser):
    campaign, run = ranked_campaign()
    criterion = campaign.criteria.get(name="quality")
    estimates = {campaign.systems.get(pk=int(s)).name: e for s, e in criterion.estimates.items()}
    assert estimates["sys1"][0] > estimates["sys2"][0] > estimates["sys3"][0]
    assert [e[2] for e in estimates.values()] == [12, 12, 12]  # 6 HITs, 2 comparisons each


def test_results_page_says_since_when_the_clusters_are_stable_and_that_they_closed_it(
    organiser,
):
    campaign, systems, items = make_system_set(systems=3, items=16)
    criterion = campaign.criteria.get(name="quality")
    criterion.close_when_stable_for = 4
    criterion.save(update_fields=["close_when_stable_for"])
    pages = []
    for judged in (items[:12], items[12:]):  # two runs, at 12 and 16 HITs, same clusters
        for item in judged:
            make_judged_hit(list(item.outputs.order_by("system__name")), [300, 100, 10])
        run = RankingRun.objects.create(
            campaign=campaign,
            criterion=campaign.criteria.get(name="quality"),
            repetitions=50,
            seed=1,
        )
        execute_run(run)
        pages.append(organiser.get(results_url(campaign)).content.decode())
    assert "they come from the latest run, at 12 counted HITs" in pages[0]
    assert "stayed the same" not in pages[0]
    page = pages[1]
    assert "These clusters have stayed the same since the run at\n  12 counted HITs" in page
    assert "over the 4 HITs counted since" in page
    assert "it was closed on that ground" in page
    criterion.refresh_from_db()
    assert not criterion.is_open
    other_view = organiser.get(results_url(campaign) + "?protocol=bt").content.decode()
    assert 'id="stability"' not in other_view
