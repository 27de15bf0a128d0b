"""Agreement between annotators, measured by the ranking run and stored with it."""

from datetime import timedelta

import krippendorff
import numpy as np
import pytest

from annotation.identity import set_excluded
from annotation.models import Assignment, Judgment
from ranking.agreement.models import AnnotatorAgreement, RunAgreement
from ranking.models import RankingRun
from ranking.service import execute_run
from tests.factories import make_annotator, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db

# Scores of sys1, sys2, sys3 and the normalised ranks they give.
ALIKE, REVERSED = [300, 100, 50], [10, 20, 30]
ALIKE_RANKS, REVERSED_RANKS = [1, 0.5, 0], [0, 0.5, 1]


def judge(annotator, item, scores, seconds=0, criterion="quality"):
    outputs = list(item.outputs.order_by("system__name"))
    assignment = make_judged_hit(outputs, scores, annotator, criterion=criterion)
    assignment.submitted_at = assignment.started_at + timedelta(seconds=seconds)
    assignment.save(update_fields=["submitted_at"])
    return assignment


def judged_campaign():
    """A and B agree on items 1 and 2 and disagree on 3; C (excluded later) and D (whose
    HIT is flagged) judge item 1 too; naturalness HITs are another criterion's."""
    campaign, systems, items = make_system_set(systems=3, items=4)
    a, b, c, d = (make_annotator(campaign, external_id=name) for name in "ABCD")
    judge(a, items[0], ALIKE, seconds=30)
    judge(a, items[1], ALIKE, seconds=50)
    judge(a, items[2], ALIKE, seconds=100)
    judge(b, items[0], [200, 150, 10], seconds=40)
    judge(b, items[1], ALIKE, seconds=40)
    judge(b, items[2], REVERSED, seconds=40)
    judge(c, items[0], REVERSED, seconds=5)
    flagged = judge(d, items[0], REVERSED, seconds=2)
    Assignment.objects.filter(pk=flagged.pk).update(flag=Assignment.Flag.TOO_FAST)
    judge(a, items[3], REVERSED, criterion="naturalness")
    set_excluded(c, True)
    return campaign, (a, b, c, d)


def ranked(campaign) -> RankingRun:
    run = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
    )
    assert execute_run(run)
    return run


def test_run_stores_alpha_of_counted_judgments_as_the_package_computes_it():
    campaign, _ = judged_campaign()
    agreement = RunAgreement.objects.get(run=ranked(campaign))
    # A's and B's ranks; C is excluded and D's HIT flagged, so neither counts.
    a = ALIKE_RANKS * 3
    b = ALIKE_RANKS * 2 + REVERSED_RANKS
    expected = krippendorff.alpha(reliability_data=[a, b], level_of_measurement="interval")
    assert agreement.alpha == pytest.approx(expected, abs=1e-12)
    assert agreement.alpha_low <= agreement.alpha_high
    assert (agreement.units, agreement.judgments, agreement.rounds) == (9, 18, 1000)


def test_run_stores_each_annotators_work_and_agreement_with_the_others():
    campaign, (a, b, c, d) = judged_campaign()
    run = ranked(campaign)
    rows = {row.annotator_id: row for row in AnnotatorAgreement.objects.filter(run=run)}
    assert set(rows) == {a.pk, b.pk, c.pk, d.pk}
    shown = {
        name: (row.hits, row.flagged, row.median_seconds, row.excluded, row.shared_units)
        for name, row in zip("ABCD", (rows[x.pk] for x in (a, b, c, d)), strict=True)
    }
    assert shown == {
        "A": (3, 0, 50, False, 9),  # its naturalness HIT is another criterion's
        "B": (3, 0, 40, False, 9),
        "C": (1, 0, 5, True, 3),
        "D": (1, 1, 2, False, 3),
    }
    a_ranks, b_ranks = ALIKE_RANKS * 3, ALIKE_RANKS * 2 + REVERSED_RANKS
    assert rows[a.pk].correlation == pytest.approx(np.corrcoef(a_ranks, b_ranks)[0, 1])
    assert rows[b.pk].correlation == rows[a.pk].correlation
    # C and D are compared with A and B, who agree on item 1: the reverse of theirs.
    assert rows[c.pk].correlation == pytest.approx(-1)
    assert rows[d.pk].correlation == pytest.approx(-1)


def test_run_without_pairs_judged_twice_stores_no_alpha():
    campaign, systems, items = make_system_set(systems=3, items=2)
    judge(make_annotator(campaign), items[0], ALIKE)
    judge(make_annotator(campaign), items[1], ALIKE)
    run = ranked(campaign)
    agreement = RunAgreement.objects.get(run=run)
    assert (agreement.alpha, agreement.alpha_low, agreement.units) == (None, None, 0)
    rows = AnnotatorAgreement.objects.filter(run=run)
    assert list(rows.values_list("correlation", "shared_units")) == [(None, 0), (None, 0)]


def test_a_criterion_asked_on_another_page_is_measured_on_its_own_judgments():
    """Quality's DA pages also ask naturalness: A and B agree on quality and disagree on
    naturalness, so naturalness's run measures the disagreement, over its pages."""
    campaign, systems, items = make_system_set(systems=3, items=3)
    naturalness = campaign.criteria.get(name="naturalness")
    campaign.criteria.update(form="da")
    campaign.criteria.filter(name="quality").update(settings={"also_asks": ["naturalness"]})
    a, b = (make_annotator(campaign, external_id=name) for name in "AB")
    for annotator, further in ((a, [90, 50, 10]), (b, REVERSED)):
        for item in items:
            page = judge(annotator, item, [90, 50, 10], seconds=30)
            for slot, score in zip(page.hit.slots.order_by("position"), further, strict=True):
                Judgment.objects.create(
                    assignment=page, slot=slot, criterion=naturalness, score=score
                )
    run = RankingRun.objects.create(
        campaign=campaign, criterion=naturalness, protocol="e2e", repetitions=10
    )
    assert execute_run(run)
    agreement = RunAgreement.objects.get(run=run)
    expected = krippendorff.alpha(
        reliability_data=[ALIKE_RANKS * 3, REVERSED_RANKS * 3], level_of_measurement="interval"
    )
    assert agreement.alpha == pytest.approx(expected, abs=1e-12) and agreement.alpha < 0
    assert (agreement.units, agreement.judgments) == (9, 18)
    rows = AnnotatorAgreement.objects.filter(run=run).order_by("annotator__external_id")
    # Their pages are quality's HITs: each annotator's 3 count for naturalness too.
    assert [(row.hits, row.median_seconds) for row in rows] == [(3, 30), (3, 30)]
    assert rows[0].correlation == pytest.approx(-1)
