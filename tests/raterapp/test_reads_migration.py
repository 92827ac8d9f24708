"""The reads migration on a database in use: an experiment without a budget row (reads used to
create it on first use, unlimited) gets one; existing rows and old derived estimates have no slices."""

import pytest

from tests.raterapp.migrations_at import back_to_latest, migrate, migration_named


@pytest.mark.django_db(transaction=True)
def test_missing_budget_rows_are_created_unlimited_and_old_derived_estimates_have_no_slices():
    node, parent = migration_named("_reads")
    with back_to_latest():
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
