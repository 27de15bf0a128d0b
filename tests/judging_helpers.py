"""Builders the tests of the judgment forms share (DA, pairwise, ESA: tests/annotation/
test_da.py, test_esa.py, test_pairwise.py, test_ratings_*.py)."""

from collections.abc import Callable

from annotation.attention import record_attention_verdict
from annotation.models import Assignment, Campaign, CampaignCriterion, HitOutput
from ranking.models import RankingRun
from ranking.service import queue_due_rankings
from ranking.tasks import compute_ranking
from tests.factories import (
    make_annotator,
    make_campaign,
    make_hit,
    make_item,
    make_output,
    make_system,
)

SYSTEMS = ["alpha", "beta", "gamma", "delta"]


def plain_text(system: str, n: int) -> str:
    return f"{system} on item {n}."


def form_world(slug: str = "", text_of: Callable[[str, int], str] = plain_text) -> Campaign:
    """A campaign of the 4 SYSTEMS with an output for each of 6 items (ids i1..i6), the
    outputs' texts `text_of(system, n)`; no criterion of the form yet."""
    campaign = make_campaign(**({"slug": slug} if slug else {}))
    systems = [make_system(campaign, name=name) for name in SYSTEMS]
    for n in range(1, 7):
        item = make_item(campaign, external_id=f"i{n}")
        for system in systems:
            make_output(item, system, text=text_of(system.name, n))
    return campaign


def hit_with_copy(campaign: Campaign, annotator, criterion: CampaignCriterion) -> Assignment:
    """A submitted assignment of `annotator` on a HIT of `criterion`: the first item's first
    two outputs, then (position 3) an attention check's degraded copy of the first. Its
    judgments are the caller's."""
    item = campaign.items.first()
    assert item is not None
    outputs = list(item.outputs.all()[:2])
    hit = make_hit(outputs, criterion=criterion)
    first = hit.slots.get(position=1)
    HitOutput.objects.create(hit=hit, output=first.output, position=3, degraded_text="Scrambled.")
    return Assignment.objects.create(hit=hit, annotator=annotator, status="submitted")


def assert_copies_scored_above_originals_fail(campaign: Campaign, checked_hit) -> None:
    """Of two annotators with 4 HITs each made by `checked_hit(campaign, annotator,
    original, degraded)`, who scores the copies above the originals fails the attention
    verdict and is excluded; who scores them below passes, on 4 checks."""
    careless, careful = make_annotator(campaign), make_annotator(campaign)
    for _ in range(4):
        checked_hit(campaign, careless, original=20, degraded=90)
        checked_hit(campaign, careful, original=90, degraded=0)
    assert record_attention_verdict(careless).failed
    verdict = record_attention_verdict(careful)
    assert not verdict.failed and verdict.checks == 4
    careless.refresh_from_db()
    assert careless.is_excluded


def ranked(campaign: Campaign, *columns: str) -> dict[tuple[str, str], list[tuple]]:
    """Queue what the sweep finds due, run each through the worker's task function; then
    (criterion, protocol) -> [(system, mu to 9 decimals, cluster, *columns)] best first."""
    for run in queue_due_rankings():
        compute_ranking(run_id=run.pk)
    found = {}
    for run in RankingRun.objects.filter(campaign=campaign).select_related("criterion"):
        assert run.status == RankingRun.Status.DONE, run.error
        rows = run.results.order_by("position").values_list(
            "system__name", "mu", "cluster", *columns
        )
        found[(run.criterion.name, run.protocol)] = [
            (s, round(mu, 9), *rest) for s, mu, *rest in rows
        ]
    return found
