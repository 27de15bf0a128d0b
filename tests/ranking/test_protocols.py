"""The registry of ranking protocols: every protocol is complete, the rest of the code asks
the registry and names none, and the protocols of one change share one agreement."""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from django.template.loader import get_template

import ranking.protocols as package
from annotation.identity import set_excluded
from ranking.agreement.models import AnnotatorAgreement, RunAgreement
from ranking.models import RankingRun
from ranking.protocols import NAMES, REGISTERED, protocol_named
from ranking.service import execute_run
from tests.ranking.agreement.test_service import judged_campaign

REPO = Path(__file__).resolve().parents[2]
# Where protocols used to be listed one by one; now each asks the registry.
ASKS_THE_REGISTRY = [
    "ranking/service.py",
    "ranking/views.py",
    "ranking/export.py",
    "ranking/forms.py",
    "ranking/models.py",
    "ranking/admin.py",
    "ranking/management/commands/rank.py",
    "evalsite/datasheet.py",
    "templates/ranking/results.html",
]


@pytest.mark.parametrize("protocol", REGISTERED, ids=NAMES)
def test_protocol_is_complete(protocol):
    assert re.fullmatch(r"[a-z0-9_]{1,10}", protocol.name)  # fits RankingRun.protocol
    assert protocol.label and protocol.presentation.summary
    assert protocol.datasheet.aggregation and protocol.datasheet.significance
    get_template(protocol.presentation.table_template)  # raises if the partial is missing
    assert protocol.csv_columns[1] == "system"
    assert len(set(protocol.csv_columns)) == len(protocol.csv_columns)


def test_every_module_s_views_are_registered_the_first_ones_first():
    """The registry imports every module of ranking/protocols/ and holds its views."""
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"ranking.protocols.{info.name}")
        views = getattr(module, "VIEWS", None) or (getattr(module, "PROTOCOL", None),)
        assert all(view in REGISTERED for view in views if view is not None), info.name
    assert NAMES[: len(package.FIRST)] == list(package.FIRST)


def test_protocol_named_refuses_an_unknown_one_naming_the_known():
    with pytest.raises(
        ValueError, match="unknown protocol 'elo': use one of calibrated, e2e, bootstrap"
    ):
        protocol_named("elo")


@pytest.mark.parametrize("path", ASKS_THE_REGISTRY)
def test_module_outside_the_registry_names_no_protocol(path):
    source = (REPO / path).read_text()
    named = [name for name in NAMES if re.search(rf"""["']{name}["']""", source)]
    assert named == [], f"{path} names protocols {named}: ask ranking.protocols instead"


@pytest.mark.django_db
def test_runs_of_one_version_share_the_agreement_measured_first():
    campaign, _ = judged_campaign()
    first, second = (
        RankingRun.objects.create(
            campaign=campaign,
            criterion=campaign.criteria.get(name="quality"),
            protocol=name,
            repetitions=10,
        )
        for name in ("e2e", "bt")
    )
    assert execute_run(first) and execute_run(second)
    measured, copied = (RunAgreement.objects.get(run=run) for run in (first, second))
    fields = ["alpha", "alpha_low", "alpha_high", "rounds", "units", "judgments", "seconds"]
    assert [getattr(copied, f) for f in fields] == [getattr(measured, f) for f in fields]
    per_annotator = ["annotator_id", "hits", "flagged", "correlation", "excluded"]
    rows = [
        list(AnnotatorAgreement.objects.filter(run=run).values_list(*per_annotator))
        for run in (first, second)
    ]
    assert rows[0] == rows[1] and len(rows[0]) == 4


@pytest.mark.django_db
def test_a_change_to_the_judgments_measures_agreement_again():
    campaign, (_, b, _, _) = judged_campaign()
    before = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
    )
    assert execute_run(before)
    set_excluded(b, True)  # bumps the criterion's judgments version
    after = RankingRun.objects.create(
        campaign=campaign, criterion=campaign.criteria.get(name="quality"), repetitions=10
    )
    assert execute_run(after)
    before.refresh_from_db()
    after.refresh_from_db()
    assert after.judgments_version > before.judgments_version
    excluded = dict(
        AnnotatorAgreement.objects.filter(run=after).values_list("annotator_id", "excluded")
    )
    assert excluded[b.pk] is True  # measured anew: b is excluded in this version
    assert RunAgreement.objects.get(run=after).units < RunAgreement.objects.get(run=before).units
