import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("raterapp", "0014_admin_console"),
    ]

    operations = [
        migrations.CreateModel(
            name="RaterAwareEstimate",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("judgements", models.PositiveIntegerField()),
                ("seconds", models.FloatField(help_text="How long the computation took.")),
                (
                    "payload",
                    models.JSONField(
                        help_text="RaterAwareQuality.as_dict(), raters as user ids; null when not fitted.",
                        null=True,
                    ),
                ),
                (
                    "error",
                    models.TextField(blank=True, help_text="Why there are no rater-aware estimates (too few verdicts, …)."),
                ),
                (
                    "transitivity",
                    models.JSONField(
                        help_text="metrics_core TransitivityReport: counts and inconsistent triangles, items as item ids."
                    ),
                ),
                (
                    "experiment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rater_aware_estimates",
                        to="raterapp.experiment",
                    ),
                ),
            ],
            options={
                "ordering": ["experiment", "-created_at"],
                "indexes": [models.Index(fields=["experiment", "created_at"], name="rater_aware_history")],
            },
        ),
    ]
