"""A campaign without a standard used to show annotators the first reference of its first
item with one as the standard (annotation.views._standard). That fallback is gone: a
campaign whose pages show a standard opens only with a written one. Campaigns that were
already shown to annotators (open or closed) keep what their annotators saw, now written
into the campaign where the organiser can see and change it."""

from django.db import migrations

SHOWING_FORMS = ["rankme"]  # the judgment forms whose pages show the standard


def write_the_standard_shown(apps, schema_editor):
    Campaign = apps.get_model("annotation", "Campaign")
    Item = apps.get_model("annotation", "Item")
    shown = Campaign.objects.filter(
        standard_text="", status__in=["open", "closed"], criteria__form__in=SHOWING_FORMS
    ).distinct()
    for campaign in shown:
        item = (
            Item.objects.filter(campaign=campaign).exclude(references=[]).order_by("id").first()
        )
        if item is None:
            continue
        campaign.standard_text = item.references[0]
        campaign.standard_input_kind = item.input_kind
        campaign.standard_input = item.input_data
        campaign.save(update_fields=["standard_text", "standard_input_kind", "standard_input"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0038_composition_help_cites_research_notes"),
    ]

    operations = [migrations.RunPython(write_the_standard_shown, migrations.RunPython.noop)]
