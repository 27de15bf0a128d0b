from django.db import migrations
from django.db.models import OuterRef, Subquery

NATURALNESS = "naturalness"  # judged without the input, as shows_input was derived before


def criterion_row(apps, rows: dict, campaign_id: int, name: str) -> int:
    """The row of the campaign's criterion `name`, made (closed) where a HIT or a run names
    a criterion the campaign no longer has, so that no HIT, judgment or run is lost."""
    if (campaign_id, name) not in rows:
        CampaignCriterion = apps.get_model('annotation', 'CampaignCriterion')
        made = CampaignCriterion.objects.create(
            campaign_id=campaign_id, name=name, is_open=False, shows_input=name != NATURALNESS
        )
        rows[campaign_id, name] = made.pk
    return rows[campaign_id, name]


def criterion_rows(apps) -> dict:
    CampaignCriterion = apps.get_model('annotation', 'CampaignCriterion')
    return {(c.campaign_id, c.name): c.pk for c in CampaignCriterion.objects.all()}


def fill(apps, schema_editor):
    CampaignCriterion = apps.get_model('annotation', 'CampaignCriterion')
    Hit = apps.get_model('annotation', 'Hit')
    Assignment = apps.get_model('annotation', 'Assignment')
    Judgment = apps.get_model('annotation', 'Judgment')
    CampaignCriterion.objects.filter(name=NATURALNESS).update(shows_input=False)
    rows = criterion_rows(apps)
    pairs = Hit.objects.order_by().values_list('campaign_id', 'criterion_name').distinct()
    for campaign_id, name in list(pairs):
        pk = criterion_row(apps, rows, campaign_id, name)
        Hit.objects.filter(campaign_id=campaign_id, criterion_name=name).update(criterion_id=pk)
    hit_criterion = Assignment.objects.filter(pk=OuterRef('assignment_id')).values(
        'hit__criterion_id'
    )
    Judgment.objects.update(criterion_id=Subquery(hit_criterion[:1]))


def empty(apps, schema_editor):
    Hit = apps.get_model('annotation', 'Hit')
    CampaignCriterion = apps.get_model('annotation', 'CampaignCriterion')
    names = dict(CampaignCriterion.objects.values_list('pk', 'name'))
    for pk, name in names.items():
        Hit.objects.filter(criterion_id=pk).update(criterion_name=name)


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0022_criterion_rows'),
    ]

    operations = [
        migrations.RunPython(fill, empty),
    ]
