"""Draw order (abcde-spec §14): which order an experiment's tasks were created in, and each sampled
pair's draw positions. Existing experiments were created in random order."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("raterapp", "0022_recall_base_range"),
    ]

    operations = [
        migrations.AddField(
            model_name="experiment",
            name="task_order",
            field=models.CharField(
                choices=[
                    ("random", "Random order of pairs (experiments created before draw order)"),
                    ("draw", "Draw order: by each pair's first draw (abcde-spec §14)"),
                ],
                default="random",
                help_text="The order in which the pairs became tasks: in draw order the estimates use each "
                "batch's labelled prefix (abcde-spec §14); in random order (older experiments) every verdict.",
                max_length=8,
            ),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="experiment",
            name="task_order",
            field=models.CharField(
                choices=[
                    ("random", "Random order of pairs (experiments created before draw order)"),
                    ("draw", "Draw order: by each pair's first draw (abcde-spec §14)"),
                ],
                default="draw",
                help_text="The order in which the pairs became tasks: in draw order the estimates use each "
                "batch's labelled prefix (abcde-spec §14); in random order (older experiments) every verdict.",
                max_length=8,
            ),
        ),
        migrations.AddField(
            model_name="sampledpair",
            name="positions",
            field=models.JSONField(
                blank=True,
                help_text="Draw order (abcde-spec §14): each batch that drew the pair → the ascending positions "
                "of its draws in that batch's permutation. Null in experiments created before draw order.",
                null=True,
            ),
        ),
    ]
