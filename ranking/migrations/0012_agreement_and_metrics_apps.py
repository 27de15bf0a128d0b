"""Agreement and automatic metrics become their own apps (ranking/agreement/ and
ranking/automatic_metrics/): their models leave ranking's migration state here, and enter
the new apps' in their 0001 migrations. State only: the tables stay as they are, with their
names (each moved model sets Meta.db_table), rows, indexes and constraints."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('ranking', '0011_metric_logicnlg_bleu'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='metricresult',
                    name='run',
                ),
                migrations.RemoveField(
                    model_name='metricresult',
                    name='system',
                ),
                migrations.RemoveField(
                    model_name='metricrun',
                    name='campaign',
                ),
                migrations.RemoveField(
                    model_name='runagreement',
                    name='run',
                ),
                migrations.DeleteModel(
                    name='AnnotatorAgreement',
                ),
                migrations.DeleteModel(
                    name='MetricResult',
                ),
                migrations.DeleteModel(
                    name='MetricRun',
                ),
                migrations.DeleteModel(
                    name='RunAgreement',
                ),
            ],
        ),
    ]
