"""Agreement and automatic metrics left the ranking app for their own (ranking/agreement/,
ranking/automatic_metrics/) by migrations that change the state only: an install from
before keeps its tables, rows and permissions."""

import pytest
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from ranking.agreement.models import AnnotatorAgreement, RunAgreement
from ranking.automatic_metrics.models import MetricResult, MetricRun
from tests.factories import make_system_set

# Where each moved model's rows have always been.
TABLES = {
    RunAgreement: "ranking_runagreement",
    AnnotatorAgreement: "ranking_annotatoragreement",
    MetricRun: "ranking_metricrun",
    MetricResult: "ranking_metricresult",
}
BEFORE_THE_SPLIT = [
    ("ranking", "0011_metric_logicnlg_bleu"),
    ("agreement", None),
    ("automatic_metrics", None),
]


@pytest.mark.django_db
def test_moved_models_keep_the_tables_they_had_in_ranking():
    assert {model: model._meta.db_table for model in TABLES} == TABLES
    assert set(TABLES.values()) <= set(connection.introspection.table_names())
    labels = {model._meta.label for model in TABLES}
    assert labels == {
        "agreement.RunAgreement",
        "agreement.AnnotatorAgreement",
        "automatic_metrics.MetricRun",
        "automatic_metrics.MetricResult",
    }


def content_type_ids() -> dict[tuple[str, str], int]:
    rows = ContentType.objects.filter(model__in=[m._meta.model_name for m in TABLES])
    return {(ct.app_label, ct.model): ct.pk for ct in rows}


@pytest.mark.django_db(transaction=True)
def test_migrating_across_the_split_keeps_rows_content_types_and_permissions():
    campaign = make_system_set(systems=2, items=1)[0]
    after = content_type_ids()
    old_state = MigrationExecutor(connection).migrate(BEFORE_THE_SPLIT)
    # Back before the split, the models' content types are ranking's again, the same rows.
    before = content_type_ids()
    assert sorted(before.values()) == sorted(after.values())
    assert {label for label, _ in before} == {"ranking"}
    old_run = old_state.apps.get_model("ranking", "MetricRun")
    run = old_run.objects.create(campaign_id=campaign.pk, status="done", systems=2)
    viewer = User.objects.create_user("viewer")
    viewer.user_permissions.add(
        Permission.objects.get(content_type__app_label="ranking", codename="view_metricrun")
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    ContentType.objects.clear_cache()

    assert list(MetricRun.objects.values_list("pk", "campaign", "systems")) == [
        (run.pk, campaign.pk, 2)
    ]
    assert content_type_ids() == after
    assert ContentType.objects.get_for_model(MetricRun).pk == before[("ranking", "metricrun")]
    assert User.objects.get(pk=viewer.pk).has_perm("automatic_metrics.view_metricrun")
    assert not ContentType.objects.filter(app_label="ranking", model="metricrun").exists()
