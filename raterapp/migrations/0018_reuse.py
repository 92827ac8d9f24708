"""Workspaces and verdict reuse (abcde-spec §11): every existing experiment gets a workspace of its
own (so nothing is shared that was not before) and the version of its question; existing tasks
get their pair key and their experiment's question version."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Q

from raterapp.reuse_keys import pair_key, question_digest

_BATCH = 1000


def workspaces_and_keys_fill(apps, schema_editor):
    Experiment = apps.get_model("raterapp", "Experiment")
    Workspace = apps.get_model("raterapp", "Workspace")
    QuestionVersion = apps.get_model("raterapp", "QuestionVersion")
    PairTask = apps.get_model("raterapp", "PairTask")
    for experiment in Experiment.objects.order_by("pk").iterator():
        digest = question_digest(experiment.question, experiment.guidelines)
        version, _ = QuestionVersion.objects.get_or_create(
            digest=digest, defaults={"question": experiment.question, "guidelines": experiment.guidelines}
        )
        workspace = Workspace.objects.create(name=f"{experiment.name[:150]} (experiment {experiment.pk})")
        Experiment.objects.filter(pk=experiment.pk).update(workspace=workspace, question_version=version)
        tasks = list(
            PairTask.objects.filter(experiment_id=experiment.pk).only("pk", "item_a__item_id", "item_b__item_id")
            .select_related("item_a", "item_b")
        )
        for task in tasks:
            task.pair_key = pair_key(task.item_a.item_id, task.item_b.item_id)
            task.question_version_id = version.pk
        PairTask.objects.bulk_update(tasks, ["pair_key", "question_version"], batch_size=_BATCH)


class Migration(migrations.Migration):
    # The backfill updates rows of tables whose columns the last steps alter: on PostgreSQL that
    # cannot share one transaction ("pending trigger events"), so each step commits on its own.
    atomic = False

    dependencies = [
        ("raterapp", "0017_reads"),
    ]

    operations = [
        migrations.CreateModel(
            name="Workspace",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=200, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.CreateModel(
            name="QuestionVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "digest",
                    models.CharField(
                        help_text="reuse_keys.question_digest of the texts.", max_length=64, unique=True
                    ),
                ),
                ("question", models.CharField(max_length=500)),
                ("guidelines", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.AddField(
            model_name="experiment",
            name="reuse_verdicts",
            field=models.BooleanField(
                default=True,
                help_text="Takes verdicts of its workspace for pairs judged there, and offers its own; off: neither.",
            ),
        ),
        migrations.AddField(
            model_name="experiment",
            name="workspace",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="experiments",
                to="raterapp.workspace",
            ),
        ),
        migrations.AddField(
            model_name="experiment",
            name="question_version",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="experiments",
                to="raterapp.questionversion",
            ),
        ),
        migrations.AddField(
            model_name="pairtask",
            name="pair_key",
            field=models.CharField(blank=True, default="", help_text="reuse_keys.pair_key of its item ids.", max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="pairtask",
            name="question_version",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="raterapp.questionversion",
            ),
        ),
        migrations.RunPython(workspaces_and_keys_fill, migrations.RunPython.noop, atomic=True),
        migrations.AlterField(
            model_name="experiment",
            name="workspace",
            field=models.ForeignKey(
                help_text="Experiments of one workspace share item ids and, under the same question, verdicts.",
                on_delete=django.db.models.deletion.PROTECT,
                related_name="experiments",
                to="raterapp.workspace",
            ),
        ),
        migrations.AlterField(
            model_name="experiment",
            name="question_version",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="experiments",
                to="raterapp.questionversion",
            ),
        ),
        migrations.AddIndex(
            model_name="pairtask",
            index=models.Index(
                condition=Q(("gold_answer", "")),
                fields=["pair_key", "question_version"],
                name="task_reuse_lookup",
            ),
        ),
        migrations.CreateModel(
            name="ReusedVerdict",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "experiment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="reused_verdicts",
                        to="raterapp.experiment",
                    ),
                ),
                (
                    "source",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="reuses", to="raterapp.judgement"
                    ),
                ),
                (
                    "task",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="reused_verdicts",
                        to="raterapp.pairtask",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["experiment", "task"], name="reused_verdict_experiment")],
                "constraints": [models.UniqueConstraint(fields=("task", "source"), name="reused_verdict_once")],
            },
        ),
    ]
