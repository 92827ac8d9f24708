"""The ledger's migration on a database in use: what budgets and pools spent before becomes
opening entries, so the ledger's sums equal their totals at once, and the experiments there
were stay open to every rater (the setting only decides for new ones)."""

import pytest

from tests.raterapp.migrations_at import back_to_latest, migrate, migration_named


@pytest.mark.django_db(transaction=True)
def test_spending_before_the_ledger_becomes_its_opening_balance_and_old_experiments_stay_open(settings):
    settings.NEW_EXPERIMENT_OPEN_TO = "assigned"
    node, parent = migration_named("_ledger_quotas")
    with back_to_latest():
        before = migrate(parent)
        owner = before.get_model("auth", "User").objects.create(username="owner")
        pool = before.get_model("raterapp", "BudgetPool").objects.create(name="p", max_verdicts=10, spent=5)
        experiments = before.get_model("raterapp", "Experiment")
        budgets = before.get_model("raterapp", "ExperimentBudget")
        first = experiments.objects.create(name="first", owner=owner)
        second = experiments.objects.create(name="second", owner=owner)
        budgets.objects.create(experiment=first, spent=3, pool=pool)
        budgets.objects.create(experiment=second, spent=0)

        after = migrate(node)
        entries = after.get_model("raterapp", "BudgetLedgerEntry").objects.order_by("pk")
        assert set(entries.values_list("kind", "experiment", "pool", "amount")) == {
            ("opening", None, pool.pk, 5),
            ("opening", first.pk, None, 3),
        }
        assert set(after.get_model("raterapp", "Experiment").objects.values_list("open_to_all_raters", flat=True)) == {
            True
        }
    from raterapp.selectors.budgets import budget_ledger_mismatches_get

    assert budget_ledger_mismatches_get() == []
