"""Coupled sampling (abcde-spec §11): a batch records the experiment it was drawn coupled to, and how
many of its draws kept that experiment's draw. Existing batches were drawn the ordinary way (null)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("raterapp", "0018_reuse"),
    ]

    operations = [
        migrations.AddField(
            model_name="samplebatch",
            name="coupled_to",
            field=models.ForeignKey(
                blank=True,
                help_text="Drawn coupled to this experiment's batch of the same index (abcde-spec §11); empty: ordinary.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="raterapp.experiment",
            ),
        ),
        migrations.AddField(
            model_name="samplebatch",
            name="coupled_kept",
            field=models.PositiveIntegerField(
                blank=True, help_text="Draws of the batch that kept the coupled experiment's draw.", null=True
            ),
        ),
    ]
