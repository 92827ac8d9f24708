"""Each rater's verdicts per experiment as a row, kept by triggers on raterapp_judgement (every
insert and delete, whatever writes it), and filled from the judgements there are."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

COUNTS, JUDGEMENTS, TASKS = "raterapp_raterverdictcount", "raterapp_judgement", "raterapp_pairtask"

POSTGRESQL = f"""
CREATE FUNCTION raterapp_verdict_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO {COUNTS} AS c (rater_id, experiment_id, verdicts)
        SELECT NEW.rater_id, t.experiment_id, 1 FROM {TASKS} t WHERE t.id = NEW.task_id
        ON CONFLICT (rater_id, experiment_id) DO UPDATE SET verdicts = c.verdicts + 1;
    ELSE
        UPDATE {COUNTS} c SET verdicts = c.verdicts - 1 FROM {TASKS} t
        WHERE t.id = OLD.task_id AND c.experiment_id = t.experiment_id AND c.rater_id = OLD.rater_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER raterapp_verdict_count AFTER INSERT OR DELETE ON {JUDGEMENTS}
    FOR EACH ROW EXECUTE FUNCTION raterapp_verdict_count();
"""
POSTGRESQL_DROP = f"""
DROP TRIGGER IF EXISTS raterapp_verdict_count ON {JUDGEMENTS};
DROP FUNCTION IF EXISTS raterapp_verdict_count();
"""
SQLITE = [
    f"""CREATE TRIGGER raterapp_verdict_count_insert AFTER INSERT ON {JUDGEMENTS} BEGIN
        INSERT INTO {COUNTS} (rater_id, experiment_id, verdicts)
        SELECT NEW.rater_id, t.experiment_id, 1 FROM {TASKS} t WHERE t.id = NEW.task_id
        ON CONFLICT (rater_id, experiment_id) DO UPDATE SET verdicts = verdicts + 1;
    END""",
    f"""CREATE TRIGGER raterapp_verdict_count_delete AFTER DELETE ON {JUDGEMENTS} BEGIN
        UPDATE {COUNTS} SET verdicts = verdicts - 1
        WHERE rater_id = OLD.rater_id
            AND experiment_id = (SELECT t.experiment_id FROM {TASKS} t WHERE t.id = OLD.task_id);
    END""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS raterapp_verdict_count_insert",
    "DROP TRIGGER IF EXISTS raterapp_verdict_count_delete",
]
FILL = f"""
INSERT INTO {COUNTS} (rater_id, experiment_id, verdicts)
SELECT j.rater_id, t.experiment_id, count(*) FROM {JUDGEMENTS} j JOIN {TASKS} t ON t.id = j.task_id
GROUP BY j.rater_id, t.experiment_id
"""


def _run(schema_editor, statements) -> None:
    for statement in statements:
        schema_editor.execute(statement)


def triggers_create_and_fill(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    _run(schema_editor, [POSTGRESQL] if vendor == "postgresql" else SQLITE)
    schema_editor.execute(FILL)


def triggers_drop(apps, schema_editor):
    _run(schema_editor, [POSTGRESQL_DROP] if schema_editor.connection.vendor == "postgresql" else SQLITE_DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("raterapp", "0020_ground_truth_names"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="RaterVerdictCount",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("verdicts", models.PositiveIntegerField(default=0)),
                (
                    "experiment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="raterapp.experiment"
                    ),
                ),
                (
                    "rater",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("rater", "experiment"), name="rater_verdict_count_once")
                ],
            },
        ),
        migrations.RunPython(triggers_create_and_fill, triggers_drop),
    ]
