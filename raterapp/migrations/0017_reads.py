from django.db import migrations, models


def missing_budgets_create(apps, schema_editor):
    """Every experiment gets its budget row, which reads no longer create on first use. A row
    missing here is one those reads would have created: unlimited (the model's default)."""
    Experiment = apps.get_model("raterapp", "Experiment")
    ExperimentBudget = apps.get_model("raterapp", "ExperimentBudget")
    missing = Experiment.objects.filter(budget__isnull=True).values_list("pk", flat=True)
    ExperimentBudget.objects.bulk_create(ExperimentBudget(experiment_id=pk) for pk in missing.iterator())


class Migration(migrations.Migration):
    dependencies = [
        ("raterapp", "0016_rating_loop"),
    ]

    operations = [
        migrations.AddField(
            model_name="derivedestimate",
            name="slices",
            field=models.JSONField(
                blank=True,
                help_text="Quality estimates per slice value (attribute → value → metric, contribution); null on rows from before they were computed here.",
                null=True,
            ),
        ),
        migrations.RunPython(missing_budgets_create, migrations.RunPython.noop),
    ]
