"""CriterionScore's rows are Judgments since 0030: the side table goes."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0030_judgment_per_criterion"),
    ]

    operations = [
        migrations.DeleteModel(
            name="CriterionScore",
        ),
    ]
