# Criteria are free names (CampaignCriterion.name, with shows_input its own field), and a
# HIT and a judgment point at their criterion's row instead of holding its name. Made in
# three steps (this one: new columns, nullable; 0023: filled; 0024: required), so that no
# table is altered in the transaction that writes its rows (PostgreSQL refuses that while
# deferred foreign-key checks are pending).

import django.db.models.deletion
from django.db import migrations, models

import annotation.models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0021_upload_job'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='campaigncriterion',
            name='criterion_once',
        ),
        migrations.RenameField(
            model_name='campaigncriterion',
            old_name='criterion',
            new_name='name',
        ),
        migrations.AlterField(
            model_name='campaigncriterion',
            name='name',
            field=models.CharField(help_text="A short name of the organiser's choosing, in the annotators' links and the results (e.g. quality, naturalness, correctness, data-coverage).", max_length=40, validators=[annotation.models.validate_criterion_name], verbose_name='criterion'),
        ),
        migrations.AlterModelOptions(
            name='campaigncriterion',
            options={'ordering': ['campaign', 'name'], 'verbose_name': 'criterion', 'verbose_name_plural': 'criteria'},
        ),
        migrations.AddConstraint(
            model_name='campaigncriterion',
            constraint=models.UniqueConstraint(fields=('campaign', 'name'), name='criterion_once'),
        ),
        migrations.AddField(
            model_name='campaigncriterion',
            name='shows_input',
            field=models.BooleanField(default=True, help_text="Annotators see the input beside the sentences, with the coverage boxes (as RankME's quality); off: the sentences alone (as its naturalness)."),
        ),
        migrations.AlterField(
            model_name='campaigncriterion',
            name='question',
            field=models.TextField(blank=True, help_text="Left empty: RankME's question, for quality and naturalness only."),
        ),
        migrations.RemoveIndex(
            model_name='hit',
            name='annotation__campaig_860f59_idx',
        ),
        migrations.RenameField(
            model_name='hit',
            old_name='criterion',
            new_name='criterion_name',
        ),
        # With a default only so that going back to before 0024 can add the column again.
        migrations.AlterField(
            model_name='hit',
            name='criterion_name',
            field=models.CharField(default='', max_length=20),
        ),
        migrations.AddField(
            model_name='hit',
            name='criterion',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='hits', to='annotation.campaigncriterion'),
        ),
        migrations.AddField(
            model_name='judgment',
            name='criterion',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.campaigncriterion'),
        ),
        migrations.AlterField(
            model_name='uploadjob',
            name='criterion',
            field=models.CharField(blank=True, max_length=40, validators=[annotation.models.validate_criterion_name]),
        ),
    ]
