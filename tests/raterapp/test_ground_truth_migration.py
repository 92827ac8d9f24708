"""The ground-truth names migration on a database in use: uploads of the old kind ``gold`` take
the kind ``ground_truth``, the stored ground-truth metrics stay, and going back restores both."""

import pytest

from tests.raterapp.migrations_at import back_to_latest, migrate, migration_named

METRICS = {"quality": {"DeltaPrecision": -0.25}, "truth": {"DeltaRecall": 0.5}}


def stored(apps) -> list[tuple]:
    return list(apps.get_model("raterapp", "UploadedFile").objects.order_by("kind").values_list("kind", "size"))


@pytest.mark.django_db(transaction=True)
def test_gold_uploads_become_ground_truth_uploads_and_back():
    node, parent = migration_named("_ground_truth_names")
    with back_to_latest():
        before = migrate(parent)
        owner = before.get_model("auth", "User").objects.create(username="owner")
        workspace = before.get_model("raterapp", "Workspace").objects.create(name="w")
        version = before.get_model("raterapp", "QuestionVersion").objects.create(digest="d", question="q")
        experiment = before.get_model("raterapp", "Experiment").objects.create(
            name="x", owner=owner, workspace=workspace, question_version=version, gold=METRICS
        )
        files = before.get_model("raterapp", "UploadedFile").objects
        for size, kind in enumerate(("items", "catalogue", "gold")):
            files.create(experiment=experiment, kind=kind, file=f"{kind}.csv", original_name=f"{kind}.csv", size=size)

        after = migrate(node)
        assert stored(after) == [("catalogue", 1), ("ground_truth", 2), ("items", 0)]
        row = after.get_model("raterapp", "Experiment").objects.get(pk=experiment.pk)
        assert row.ground_truth_metrics == METRICS

        back = migrate(parent)
        assert stored(back) == [("catalogue", 1), ("gold", 2), ("items", 0)]
        assert back.get_model("raterapp", "Experiment").objects.get(pk=experiment.pk).gold == METRICS
