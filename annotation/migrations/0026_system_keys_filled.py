from django.db import migrations
from django.utils.text import slugify


def fill_keys(apps, schema_editor):
    """Each system's key from its name, as System.save makes it (free_system_key)."""
    System = apps.get_model('annotation', 'System')
    taken: dict[int, set] = {}
    for system in System.objects.order_by('pk'):
        keys = taken.setdefault(system.campaign_id, set())
        base = slugify(system.name)[:90] or 'system'
        key, n = base, 1
        while key in keys:
            n += 1
            key = f'{base}-{n}'
        keys.add(key)
        System.objects.filter(pk=system.pk).update(key=key)


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0025_system_name_and_key'),
    ]

    operations = [
        migrations.RunPython(fill_keys, migrations.RunPython.noop),
    ]
