"""A page that asks several criteria (direct assessment's `also_asks`) stores one Judgment
per slot and criterion: the further criteria's scores, kept until now as CriterionScore rows,
become Judgments of their own criterion (0031 then drops the side table). Backwards, the
judgments of a criterion other than their HIT's go back to CriterionScore."""

from django.db import migrations, models
from django.db.models import F

BATCH = 5000


def fold_scores(apps, schema_editor):
    CriterionScore = apps.get_model("annotation", "CriterionScore")
    Judgment = apps.get_model("annotation", "Judgment")
    rows = CriterionScore.objects.order_by("pk").values_list(
        "assignment_id", "slot_id", "criterion_id", "score"
    )
    batch = []
    for assignment, slot, criterion, score in rows.iterator(chunk_size=BATCH):
        batch.append(
            Judgment(assignment_id=assignment, slot_id=slot, criterion_id=criterion, score=score)
        )
        if len(batch) == BATCH:
            Judgment.objects.bulk_create(batch)
            batch = []
    Judgment.objects.bulk_create(batch)


def unfold_scores(apps, schema_editor):
    CriterionScore = apps.get_model("annotation", "CriterionScore")
    Judgment = apps.get_model("annotation", "Judgment")
    further = Judgment.objects.exclude(criterion_id=F("assignment__hit__criterion_id"))
    rows = further.order_by("pk").values_list("assignment_id", "slot_id", "criterion_id", "score")
    CriterionScore.objects.bulk_create(
        (
            CriterionScore(assignment_id=a, slot_id=s, criterion_id=c, score=score)
            for a, s, c, score in rows.iterator(chunk_size=BATCH)
        ),
        batch_size=BATCH,
    )
    further.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0029_direct_assessment_scores"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="judgment",
            name="judgment_once_per_slot",
        ),
        migrations.AddConstraint(
            model_name="judgment",
            constraint=models.UniqueConstraint(
                fields=("assignment", "slot", "criterion"), name="judgment_once_per_criterion"
            ),
        ),
        migrations.RunPython(fold_scores, unfold_scores),
    ]
