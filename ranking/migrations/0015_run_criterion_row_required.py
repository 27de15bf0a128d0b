import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ranking', '0014_run_criterion_row_filled'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='rankingrun',
            name='criterion_name',
        ),
        migrations.AlterField(
            model_name='rankingrun',
            name='criterion',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='ranking_runs', to='annotation.campaigncriterion'),
        ),
        migrations.AddIndex(
            model_name='rankingrun',
            index=models.Index(fields=['criterion', 'protocol', 'status'], name='ranking_ran_criteri_e53906_idx'),
        ),
    ]
