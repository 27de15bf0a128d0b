import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ranking", "0002_job_claims"),
    ]

    operations = [
        migrations.RenameField(model_name="rankingrun", old_name="runs", new_name="repetitions"),
        migrations.AlterField(
            model_name="rankingrun",
            name="repetitions",
            field=models.PositiveIntegerField(
                default=200,
                help_text="times the TrueSkill run is repeated with other random draws (R)",
                validators=[
                    django.core.validators.MinValueValidator(10),
                    django.core.validators.MaxValueValidator(10000),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="rankingrun",
            name="progress",
            field=models.PositiveIntegerField(default=0, help_text="repetitions done"),
        ),
    ]
