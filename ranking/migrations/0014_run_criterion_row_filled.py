from django.db import migrations

NATURALNESS = "naturalness"  # judged without the input, as shows_input was derived before


def fill(apps, schema_editor):
    CampaignCriterion = apps.get_model('annotation', 'CampaignCriterion')
    RankingRun = apps.get_model('ranking', 'RankingRun')
    rows = {(c.campaign_id, c.name): c.pk for c in CampaignCriterion.objects.all()}
    pairs = RankingRun.objects.order_by().values_list('campaign_id', 'criterion_name').distinct()
    for campaign_id, name in list(pairs):
        if (campaign_id, name) not in rows:
            # A run of a criterion the campaign no longer has: its row is made (closed)
            # rather than the run lost.
            made = CampaignCriterion.objects.create(
                campaign_id=campaign_id, name=name, is_open=False, shows_input=name != NATURALNESS
            )
            rows[campaign_id, name] = made.pk
        runs = RankingRun.objects.filter(campaign_id=campaign_id, criterion_name=name)
        runs.update(criterion_id=rows[campaign_id, name])


def empty(apps, schema_editor):
    CampaignCriterion = apps.get_model('annotation', 'CampaignCriterion')
    RankingRun = apps.get_model('ranking', 'RankingRun')
    for pk, name in CampaignCriterion.objects.values_list('pk', 'name'):
        RankingRun.objects.filter(criterion_id=pk).update(criterion_name=name)


class Migration(migrations.Migration):

    dependencies = [
        ('ranking', '0013_run_criterion_row'),
    ]

    operations = [
        migrations.RunPython(fill, empty),
    ]
