"""The workspaces migration on a database in use: every existing experiment gets a workspace of
its own (nothing is shared that was not before) and its question version; existing tasks get
their pair key and that version."""

import pytest

from raterapp.reuse_keys import pair_key, question_digest
from tests.raterapp.migrations_at import back_to_latest, migrate

NODE = ("raterapp", "0018_reuse")
PARENT = ("raterapp", "0017_reads")


@pytest.mark.django_db(transaction=True)
def test_existing_experiments_get_their_own_workspace_and_tasks_their_keys():
    with back_to_latest():
        before = migrate(PARENT)
        owner = before.get_model("auth", "User").objects.create(username="owner")
        experiments = before.get_model("raterapp", "Experiment")
        items = before.get_model("raterapp", "Item")
        tasks = before.get_model("raterapp", "PairTask")
        first = experiments.objects.create(name="first", owner=owner)
        second = experiments.objects.create(name="second", owner=owner, guidelines="Be strict.")
        item = {
            k: items.objects.create(
                experiment=first, item_id=k, position=n, base_cluster="b", exp_cluster="e", weight=1.0
            )
            for n, k in enumerate(["y", "x"])
        }
        tasks.objects.create(experiment=first, item_a=item["y"], item_b=item["x"], rank=0)

        after = migrate(NODE)
        rows = after.get_model("raterapp", "Experiment").objects.order_by("pk")
        assert [(e.workspace.name, e.question_version.digest) for e in rows] == [
            (f"first (experiment {first.pk})", question_digest(first.question, "")),
            (f"second (experiment {second.pk})", question_digest(second.question, "Be strict.")),
        ]
        task = after.get_model("raterapp", "PairTask").objects.get()
        assert (task.pair_key, task.question_version_id) == (pair_key("x", "y"), rows[0].question_version_id)
        assert after.get_model("raterapp", "Workspace").objects.count() == 2
