"""Spending a judgement budget, inside the transactions that lease pairs and record verdicts.

See ``raterapp/services/experiments/budgets.py`` for the budgets themselves and their changes.
"""

from __future__ import annotations

import uuid

from django.db import connection
from django.db.models import F

from raterapp.models import BudgetLedgerEntry, BudgetPool, Experiment, ExperimentBudget
from raterapp.selectors.judging import budget_closed_reason

from .errors import JudgementRefused, QueueClosed


class BudgetSpent(JudgementRefused):
    """The verdict would spend more than the experiment's (or its pool's) budget."""


BUDGET_SPENT = "The experiment's judgement budget is spent: this verdict was not recorded."
POOL_SPENT = "The shared judgement budget is spent: this verdict was not recorded."


def budget_consume(*, experiment_id: int, rater, verdict: uuid.UUID) -> None:
    """Spend one verdict of the experiment's budget and its pool's; raises :class:`BudgetSpent`.

    Call it inside the transaction that stores the verdict: a refusal rolls both back. The
    spend goes to the ledger with the pool charged (the budget row is locked first, so a
    pool moved meanwhile is the next verdict's).
    """
    budget = _budget_spend(experiment_id)
    if budget is None:
        ExperimentBudget.objects.filter(experiment_id=experiment_id).values("pk").get()  # made with the experiment
        raise BudgetSpent(BUDGET_SPENT)
    if budget["pool_id"] is not None and not BudgetPool.objects.filter(
        pk=budget["pool_id"], spent__lt=F("max_verdicts")
    ).update(spent=F("spent") + 1):
        raise BudgetSpent(POOL_SPENT)
    BudgetLedgerEntry.objects.create(
        kind=BudgetLedgerEntry.Kind.SPEND,
        experiment_id=experiment_id,
        pool_id=budget["pool_id"],
        rater=rater,
        verdict=verdict,
        amount=1,
        cost=budget["cost_per_verdict"],
    )


def _budget_spend(experiment_id: int) -> dict | None:
    """One unit of the experiment's budget spent, if it has one left (one conditional update,
    which locks the row); its pool and cost, or ``None``."""
    table = ExperimentBudget._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f'UPDATE "{table}" SET spent = spent + 1 WHERE experiment_id = %s'
            " AND (max_verdicts IS NULL OR spent < max_verdicts) RETURNING pool_id, cost_per_verdict",
            [experiment_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    cost = ExperimentBudget._meta.get_field("cost_per_verdict").to_python(row[1])
    return {"pool_id": row[0], "cost_per_verdict": cost}


def budget_refund(*, experiment_id: int, rater, verdict: uuid.UUID) -> None:
    """Give back the unit of an undone verdict (in the undo's transaction) to its budget and
    to the pool its spend charged, which may no longer be the experiment's. A verdict spent
    before the ledger existed refunds the experiment's pool of now."""
    spend = BudgetLedgerEntry.objects.filter(kind=BudgetLedgerEntry.Kind.SPEND, verdict=verdict).first()
    budgets = ExperimentBudget.objects.select_for_update().filter(experiment_id=experiment_id)
    budget = budgets.values("pk", "pool_id", "cost_per_verdict").first()
    if budget is None:
        return
    if spend is not None:
        pool_id, cost = spend.pool_id, spend.cost
    else:
        pool_id, cost = budget["pool_id"], budget["cost_per_verdict"]
    from_budget = ExperimentBudget.objects.filter(pk=budget["pk"], spent__gt=0).update(spent=F("spent") - 1)
    from_pool = pool_id is not None and BudgetPool.objects.filter(pk=pool_id, spent__gt=0).update(spent=F("spent") - 1)
    if from_budget or from_pool:
        BudgetLedgerEntry.objects.create(
            kind=BudgetLedgerEntry.Kind.REFUND,
            experiment_id=experiment_id if from_budget else None,
            pool_id=pool_id if from_pool else None,
            rater=rater,
            verdict=verdict,
            amount=-1,
            cost=-cost,
        )


def budget_lease_check(*, experiment: Experiment) -> None:
    """Refuse a new lease (:class:`QueueClosed`) when the budget or its pool is paused, or
    its verdicts and live leases already use it up. Locks the budget and pool rows of a limited
    budget, so concurrent leases of it queue here (call it inside the lease's transaction)."""
    budget = ExperimentBudget.objects.filter(experiment=experiment).first()
    if budget is None or (budget.max_verdicts is None and budget.pool_id is None and not budget.paused):
        # Nothing to count, so no lock: leases of an unlimited budget do not queue here. A pause
        # committed after this read stops the next lease, as if this one had come first.
        return
    budget = ExperimentBudget.objects.select_for_update().get(pk=budget.pk)
    pool = BudgetPool.objects.select_for_update().get(pk=budget.pool_id) if budget.pool_id is not None else None
    closed = budget_closed_reason(budget=budget, pool=pool)
    if closed is not None:
        raise QueueClosed(*closed)
