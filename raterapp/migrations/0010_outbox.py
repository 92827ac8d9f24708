from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("raterapp", "0009_decision_batches"),
    ]

    operations = [
        migrations.CreateModel(
            name="OutboxMessage",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("experiment_prepare", "Prepare an experiment"),
                            ("sample_batch_draw", "Draw a sample batch"),
                            ("estimates_refresh", "Refresh the estimates"),
                            ("derived_refresh", "Refresh ΔRecall and IQ"),
                            ("rater_auto_pause", "Check a rater's quality flags"),
                        ],
                        max_length=40,
                    ),
                ),
                ("target_id", models.BigIntegerField(help_text="The experiment, batch or rater the effect is about.")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "claimed_by",
                    models.UUIDField(blank=True, help_text="The dispatcher handing it to the broker now.", null=True),
                ),
                ("claimed_at", models.DateTimeField(blank=True, null=True)),
                ("attempts", models.PositiveIntegerField(default=0, help_text="Failed dispatches so far.")),
                ("last_error", models.TextField(blank=True)),
            ],
            options={
                "ordering": ["pk"],
                "indexes": [models.Index(fields=["kind", "target_id"], name="outbox_effect")],
            },
        ),
    ]
