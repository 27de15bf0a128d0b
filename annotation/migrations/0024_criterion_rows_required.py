import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0023_criterion_rows_filled'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='hit',
            name='criterion_name',
        ),
        migrations.AlterField(
            model_name='hit',
            name='criterion',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='hits', to='annotation.campaigncriterion'),
        ),
        migrations.AlterField(
            model_name='judgment',
            name='criterion',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.campaigncriterion'),
        ),
    ]
