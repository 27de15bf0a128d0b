"""Takes over agreement's models, which were ranking's until ranking 0012 (which lets
them go from its state), with the same tables: state only, nothing in the database changes
but the content types' app label."""

import django.db.models.deletion
from django.db import migrations, models

MODELS = ['runagreement', 'annotatoragreement']


def rename_content_types(old_label, new_label):
    """Move the models' content types (and so their permissions, and admin log entries)
    to the new label, where there is no row for it yet."""

    def rename(apps, schema_editor):
        ContentType = apps.get_model("contenttypes", "ContentType")
        rows = ContentType.objects.using(schema_editor.connection.alias)
        for model in MODELS:
            if not rows.filter(app_label=new_label, model=model).exists():
                rows.filter(app_label=old_label, model=model).update(app_label=new_label)

    return rename


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('annotation', '0021_upload_job'),
        ('ranking', '0012_agreement_and_metrics_apps'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='RunAgreement',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('alpha', models.FloatField(help_text="Krippendorff's alpha; empty where no pair was judged twice", null=True)),
                        ('alpha_low', models.FloatField(help_text='95% bootstrap interval, low end', null=True)),
                        ('alpha_high', models.FloatField(help_text='95% bootstrap interval, high end', null=True)),
                        ('rounds', models.PositiveIntegerField(help_text='bootstrap rounds (items resampled)')),
                        ('units', models.PositiveIntegerField(help_text='(item, system) pairs judged at least twice')),
                        ('judgments', models.PositiveIntegerField(help_text='counted judgments of those pairs')),
                        ('seconds', models.FloatField(help_text='time to load the judgments and measure')),
                        ('run', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='agreement', to='ranking.rankingrun')),
                    ],
                    options={
                        'db_table': 'ranking_runagreement',
                    },
                ),
                migrations.CreateModel(
                    name='AnnotatorAgreement',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('hits', models.PositiveIntegerField(help_text='HITs submitted')),
                        ('flagged', models.PositiveIntegerField(help_text='of those, flagged (too fast)')),
                        ('median_seconds', models.FloatField(help_text='median time per HIT', null=True)),
                        ('correlation', models.FloatField(help_text="Pearson's r of their normalised ranks with the mean of the others' on the same (item, system) pairs; empty with fewer than 3 such pairs", null=True)),
                        ('shared_units', models.PositiveIntegerField(help_text='(item, system) pairs they share with others')),
                        ('excluded', models.BooleanField(help_text='excluded from rankings when the run was computed')),
                        ('annotator', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.annotator')),
                        ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='annotator_agreement', to='ranking.rankingrun')),
                    ],
                    options={
                        'db_table': 'ranking_annotatoragreement',
                        'ordering': ['run', 'correlation', 'annotator'],
                        'constraints': [models.UniqueConstraint(fields=('run', 'annotator'), name='annotator_agreement_once')],
                    },
                ),
            ],
        ),
        migrations.RunPython(
            rename_content_types("ranking", "agreement"), rename_content_types("agreement", "ranking")
        ),
    ]
