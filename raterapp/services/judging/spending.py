"""Spending a judgement budget, inside the transactions that lease pairs and record verdicts.

See ``raterapp/services/budgets.py`` for the budgets themselves and their changes.
"""

from __future__ import annotations

from django.db.models import F, Q

from raterapp.models import BudgetPool, Experiment, ExperimentBudget
from raterapp.selectors.judging import budget_closed_reason

from .errors import JudgementRefused, QueueClosed


class BudgetSpent(JudgementRefused):
    """The verdict would spend more than the experiment's (or its pool's) budget."""


def budget_consume(*, experiment_id: int) -> None:
    """Spend one verdict of the experiment's budget and its pool's; raises :class:`BudgetSpent`.

    Call it inside the transaction that stores the verdict: a refusal rolls both back.
    """
    budget = ExperimentBudget.objects.filter(experiment_id=experiment_id).values("pk", "pool_id").first()
    if budget is None:
        budget = {"pk": ExperimentBudget.objects.get_or_create(experiment_id=experiment_id)[0].pk, "pool_id": None}
    spendable = Q(max_verdicts__isnull=True) | Q(spent__lt=F("max_verdicts"))
    if not ExperimentBudget.objects.filter(spendable, pk=budget["pk"]).update(spent=F("spent") + 1):
        raise BudgetSpent("The experiment's judgement budget is spent: this verdict was not recorded.")
    if budget["pool_id"] is not None and not BudgetPool.objects.filter(
        pk=budget["pool_id"], spent__lt=F("max_verdicts")
    ).update(spent=F("spent") + 1):
        raise BudgetSpent("The shared judgement budget is spent: this verdict was not recorded.")


def budget_refund(*, experiment_id: int) -> None:
    """Give back the unit of an undone verdict (in the undo's transaction)."""
    budget = ExperimentBudget.objects.filter(experiment_id=experiment_id, spent__gt=0)
    pool_id = budget.values_list("pool_id", flat=True).first()
    budget.update(spent=F("spent") - 1)
    if pool_id is not None:
        BudgetPool.objects.filter(pk=pool_id, spent__gt=0).update(spent=F("spent") - 1)


def budget_lease_check(*, experiment: Experiment) -> None:
    """Refuse a new lease (:class:`QueueClosed`) when the budget or its pool is paused, or
    its verdicts and live leases already use it up. Locks the budget and pool rows, so
    concurrent leases of a limited budget queue here (call it inside the lease's transaction)."""
    budget = ExperimentBudget.objects.select_for_update().filter(experiment=experiment).first()
    if budget is None:
        return
    pool = BudgetPool.objects.select_for_update().get(pk=budget.pool_id) if budget.pool_id is not None else None
    closed = budget_closed_reason(budget=budget, pool=pool)
    if closed is not None:
        raise QueueClosed(*closed)
