"""The bundle of a direct-assessment campaign whose pages ask a further criterion: its
judgments.jsonl holds that criterion's own judgments, and `rank --bundle` ranks it again
exactly as the stored runs did."""

import json
import zipfile

import numpy as np
import pytest
from django.core.management import call_command

from annotation.judging import form_named
from annotation.models import Campaign, Judgment
from ranking.bundle.rerank import rerank_bundle
from ranking.bundle.writer import JUDGMENTS
from ranking.models import RankingRun
from ranking.protocols import protocol_named
from ranking.service import execute_run
from tests.factories import make_annotator, make_judged_hit, make_system_set

pytestmark = pytest.mark.django_db

DA = form_named("da")
FIELDS = ["position", "cluster", "mu", "sigma", "mu_std", "ci_lo", "ci_hi", "rank_lo", "rank_hi"]


def da_campaign(pages: int = 12) -> Campaign:
    """Quality's DA pages of 3 of 4 systems also ask naturalness; naturalness's scores
    order the systems the other way round from quality's."""
    campaign, _, items = make_system_set(systems=4, items=pages)
    campaign.criteria.update(form=DA.name)
    campaign.criteria.filter(name="quality").update(settings={"also_asks": ["naturalness"]})
    naturalness = campaign.criteria.get(name="naturalness")
    annotators = [make_annotator(campaign) for _ in range(3)]
    rng = np.random.default_rng(3)
    for n, item in enumerate(items):
        outputs = list(item.outputs.order_by("system__name"))
        shown = [outputs[i] for i in rng.permutation(4)[:3]]
        quality = [int(rng.integers(0, 101)) for _ in shown]
        page = make_judged_hit(shown, quality, annotator=annotators[n % 3])
        for slot, score in zip(page.hit.slots.order_by("position"), quality, strict=True):
            Judgment.objects.create(
                assignment=page, slot=slot, criterion=naturalness, score=100 - score
            )
    return campaign


def stored_runs(campaign: Campaign, name: str) -> dict[str, dict]:
    criterion = campaign.criteria.get(name=name)
    found = {}
    # The views a bundle ranks again: not those of a judge's scores, which it does not hold.
    bundled = [protocol for protocol in DA.protocols if not protocol_named(protocol).uses_judge]
    for seed, protocol in enumerate(bundled):
        run = RankingRun.objects.create(
            campaign=campaign, criterion=criterion, protocol=protocol, repetitions=20, seed=seed
        )
        assert execute_run(run)
        run.refresh_from_db()
        assert run.status == RankingRun.Status.DONE, run.error
        rows = run.results.select_related("system")
        found[protocol] = {r.system.name: tuple(getattr(r, f) for f in FIELDS) for r in rows}
    return found


def test_a_criterion_asked_on_another_page_is_bundled_and_ranked_again(tmp_path):
    campaign = da_campaign()
    stored = {name: stored_runs(campaign, name) for name in ("quality", "naturalness")}
    assert stored["quality"] != stored["naturalness"]
    bundle = tmp_path / "da.zip"
    call_command("bundle", campaign.slug, str(bundle))
    with zipfile.ZipFile(bundle) as archive:
        judgments = [json.loads(line) for line in archive.read(JUDGMENTS).splitlines()]
    by_criterion = {}
    for judgment in judgments:
        by_criterion.setdefault(judgment["criterion"], []).append(judgment)
    assert {name: len(rows) for name, rows in by_criterion.items()} == {
        "naturalness": 36,
        "quality": 36,
    }
    # Naturalness's judgments are on quality's pages: the same HITs and assignments.
    pages = lambda rows: [(j["hit"], j["assignment"], j["position"]) for j in rows]  # noqa: E731
    assert pages(by_criterion["naturalness"]) == pages(by_criterion["quality"])
    Campaign.objects.all().delete()

    for name, runs in stored.items():
        for protocol, results in runs.items():
            (again,) = rerank_bundle(bundle, name, protocol)
            assert again.differences == [], (name, protocol)
            rows = {r.system: tuple(getattr(r, f) for f in FIELDS) for r in again.rows}
            assert rows == results, (name, protocol)
