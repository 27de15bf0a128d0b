from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0026_system_keys_filled'),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='system',
            constraint=models.UniqueConstraint(fields=('campaign', 'key'), name='system_key_once'),
        ),
    ]
