"""Takes over the automatic metrics' models, which were ranking's until ranking 0012 (which lets
them go from its state), with the same tables: state only, nothing in the database changes
but the content types' app label."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

MODELS = ['metricrun', 'metricresult']


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
        ('ranking', '0012_agreement_and_metrics_apps'),
        ('annotation', '0021_upload_job'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='MetricRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed')], default='queued', max_length=10)),
                        ('queued_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('sent_at', models.DateTimeField(blank=True, help_text='last handed to the broker', null=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('claim_token', models.CharField(blank=True, editable=False, max_length=32)),
                        ('worker', models.CharField(blank=True, help_text='host and pid holding it', max_length=200)),
                        ('attempts', models.PositiveSmallIntegerField(default=0, help_text='times a worker took it')),
                        ('error', models.TextField(blank=True)),
                        ('systems', models.PositiveIntegerField(default=0, help_text='systems with outputs')),
                        ('outputs', models.PositiveIntegerField(default=0, help_text='outputs read')),
                        ('missing', models.JSONField(blank=True, default=dict, help_text='metric -> why it could not be computed here')),
                        ('implementations', models.JSONField(blank=True, default=dict, help_text='metric -> what computed it (versions, options)')),
                        ('compute_seconds', models.FloatField(blank=True, null=True)),
                        ('progress', models.PositiveIntegerField(default=0, help_text='systems scored so far')),
                        ('progress_total', models.PositiveIntegerField(default=0, help_text='systems to score')),
                        ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='metric_runs', to='annotation.campaign')),
                    ],
                    options={
                        'db_table': 'ranking_metricrun',
                        'ordering': ['-queued_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='MetricResult',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('metric', models.CharField(choices=[('bleu', 'BLEU'), ('nist', 'NIST'), ('meteor', 'METEOR'), ('rouge_l', 'ROUGE-L'), ('cider', 'CIDEr'), ('chrf', 'chrF'), ('normalised_average', 'Normalised average'), ('bleu1', 'BLEU-1 (LogicNLG)'), ('bleu2', 'BLEU-2 (LogicNLG)'), ('bleu3', 'BLEU-3 (LogicNLG)'), ('all_realised', 'All slots realised'), ('added', 'Slot added'), ('missing', 'Slot missing'), ('wrong_value', 'Wrong value'), ('ser', 'Slot error rate')], max_length=20)),
                        ('value', models.FloatField()),
                        ('outputs', models.PositiveIntegerField(help_text="the system's outputs that were scored")),
                        ('system', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='metric_results', to='annotation.system')),
                        ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='results', to='automatic_metrics.metricrun')),
                    ],
                    options={
                        'db_table': 'ranking_metricresult',
                        'ordering': ['run', 'system', 'metric'],
                    },
                ),
                migrations.AddIndex(
                    model_name='metricrun',
                    index=models.Index(fields=['campaign', 'status'], name='ranking_met_campaig_5c4075_idx'),
                ),
                migrations.AddConstraint(
                    model_name='metricresult',
                    constraint=models.UniqueConstraint(fields=('run', 'system', 'metric'), name='metric_result_once_per_system'),
                ),
            ],
        ),
        migrations.RunPython(
            rename_content_types("ranking", "automatic_metrics"), rename_content_types("automatic_metrics", "ranking")
        ),
    ]
