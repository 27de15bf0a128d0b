# A system's name is the one its data files and papers give it (any printable text), and
# its key, made from the name (0026), is what addresses and file names use; unique per
# campaign once filled (0027: not in the transaction that fills it, see 0022).

from django.db import migrations, models

import annotation.models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0024_criterion_rows_required'),
    ]

    operations = [
        migrations.AlterField(
            model_name='system',
            name='name',
            field=models.CharField(help_text='As data files and papers name it (e.g. Amazon_AI_(Shanghai)).', max_length=200, validators=[annotation.models.validate_system_name]),
        ),
        migrations.AddField(
            model_name='system',
            name='key',
            field=models.SlugField(blank=True, help_text="Letters, digits, '-' and '_', for addresses and file names; left empty: made from the name.", max_length=100),
        ),
        migrations.AlterField(
            model_name='uploadjob',
            name='system_name',
            field=models.CharField(blank=True, max_length=200),
        ),
    ]
