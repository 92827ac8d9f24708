"""One name for the optional clustering that gives the true clusters: the ground-truth clustering
(gold is the gold questions'). Stored uploads of the old kind ``gold`` take the new kind."""

from django.db import migrations, models


def kind_renamed(old: str, new: str):
    def rename(apps, schema_editor):
        apps.get_model("raterapp", "UploadedFile").objects.filter(kind=old).update(kind=new)

    return rename


class Migration(migrations.Migration):
    dependencies = [
        ("raterapp", "0019_coupled_sampling"),
    ]

    operations = [
        migrations.RenameField(model_name="experiment", old_name="gold", new_name="ground_truth_metrics"),
        migrations.AlterField(
            model_name="experiment",
            name="ground_truth_metrics",
            field=models.JSONField(
                blank=True,
                help_text="With a ground-truth clustering: the exact quality metrics and the true ΔRecall and IQ "
                "(metrics_core).",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="derivedestimate",
            name="payload",
            field=models.JSONField(
                help_text="metrics_core DerivedMetrics.as_dict(), plus calibration when the ground truth is known."
            ),
        ),
        migrations.AlterField(
            model_name="uploadedfile",
            name="kind",
            field=models.CharField(
                choices=[
                    ("items", "Items with base_cluster and exp_cluster"),
                    ("base", "Base clustering"),
                    ("exp", "Exp clustering"),
                    ("weights", "Item weights"),
                    ("catalogue", "Item catalogue"),
                    ("ground_truth", "Ground-truth clustering (item_id, cluster_id)"),
                ],
                max_length=20,
            ),
        ),
        migrations.RunPython(kind_renamed("gold", "ground_truth"), kind_renamed("ground_truth", "gold")),
    ]
