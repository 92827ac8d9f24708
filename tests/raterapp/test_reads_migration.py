"""The reads migration on a database in use: an experiment without a budget row (reads used to
create it on first use, unlimited) gets one; existing rows and old derived estimates have no slices."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def reads_migration() -> tuple[tuple[str, str], tuple[str, str]]:
    graph = MigrationExecutor(connection).loader.graph
    (node,) = [key for key in graph.nodes if key[0] == "raterapp" and key[1].endswith("_reads")]
    (parent,) = [key for key in graph.node_map[node].parents if key[0] == "raterapp"]
    return node, parent


def migrate(target):
    MigrationExecutor(connection).migrate([target])
    return MigrationExecutor(connection).loader.project_state(target).apps


@pytest.mark.django_db(transaction=True)
def test_missing_budget_rows_are_created_unlimited_and_old_derived_estimates_have_no_slices():
    node, parent = reads_migration()
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes("raterapp")[0]
    try:
        before = migrate(parent)
        owner = before.get_model("auth", "User").objects.create(username="owner")
        experiments = before.get_model("raterapp", "Experiment")
        budgets = before.get_model("raterapp", "ExperimentBudget")
        with_budget = experiments.objects.create(name="with", owner=owner)
        without = experiments.objects.create(name="without", owner=owner)
        budgets.objects.create(experiment=with_budget, max_verdicts=7, spent=2)
        before.get_model("raterapp", "DerivedEstimate").objects.create(
            experiment=with_budget, judgements=0, seconds=0.0, payload={}
        )

        after = migrate(node)
        rows = after.get_model("raterapp", "ExperimentBudget").objects.order_by("experiment")
        assert list(rows.values_list("experiment", "max_verdicts", "spent")) == [
            (with_budget.pk, 7, 2),
            (without.pk, None, 0),
        ]
        assert list(after.get_model("raterapp", "DerivedEstimate").objects.values_list("slices", flat=True)) == [None]
    finally:
        migrate(latest)
