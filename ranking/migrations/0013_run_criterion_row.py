# A run points at its criterion's row instead of holding its name: new column (nullable),
# filled in 0014, required in 0015 (see annotation's 0022 for why in three steps).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0024_criterion_rows_required'),
        ('ranking', '0012_agreement_and_metrics_apps'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='rankingrun',
            name='ranking_ran_campaig_5ebf38_idx',
        ),
        migrations.RenameField(
            model_name='rankingrun',
            old_name='criterion',
            new_name='criterion_name',
        ),
        # With a default only so that going back to before 0015 can add the column again.
        migrations.AlterField(
            model_name='rankingrun',
            name='criterion_name',
            field=models.CharField(default='', max_length=20),
        ),
        migrations.AddField(
            model_name='rankingrun',
            name='criterion',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='ranking_runs', to='annotation.campaigncriterion'),
        ),
    ]
