"""What a budget has spent and has left, its audit log, and what reaching a precision costs."""

from __future__ import annotations

import math
from typing import cast

from django.db.models import QuerySet, Sum
from django.utils import timezone

from metrics_core import judgements_to_target
from metrics_core.results import json_number
from raterapp.models import BudgetChange, BudgetLedgerEntry, BudgetPool, Experiment, ExperimentBudget, Lease
from raterapp.selectors.decision import decides_model_assisted, deciding_estimates
from raterapp.selectors.experiments import estimate_snapshot_latest


def budget_get(*, experiment: Experiment) -> ExperimentBudget:
    """The experiment's budget row (``budget_create`` made it with the experiment)."""
    return ExperimentBudget.objects.get(experiment=experiment)


def budget_summary_get(*, budget: ExperimentBudget) -> dict:
    """An experiment's budget: limit, cost, spent, left, pause, its pool, and the plan."""
    experiment = budget.experiment
    live = Lease.objects.filter(task__experiment=experiment, expires_at__gt=timezone.now()).count()
    return {
        "experiment": experiment.pk,
        "max_verdicts": budget.max_verdicts,
        "replication": experiment.replication,
        "cost_per_verdict": budget.cost_per_verdict,
        "total_cost": None if budget.max_verdicts is None else budget.max_verdicts * budget.cost_per_verdict,
        "spent": budget.spent,
        "spent_cost": budget.spent * budget.cost_per_verdict,
        "remaining": None if budget.max_verdicts is None else max(budget.max_verdicts - budget.spent, 0),
        "held": live,
        "paused": budget.paused,
        "pool": pool_summary_get(pool=cast(BudgetPool, budget.pool)) if budget.pool_id else None,
        "plan": budget_plan_get(experiment=experiment, cost_per_verdict=float(budget.cost_per_verdict)),
    }


def pool_summary_get(*, pool: BudgetPool) -> dict:
    return {
        "id": pool.pk,
        "name": pool.name,
        "max_verdicts": pool.max_verdicts,
        "spent": pool.spent,
        "remaining": max(pool.max_verdicts - pool.spent, 0),
        "paused": pool.paused,
        "experiments": list(pool.budgets.order_by("experiment_id").values_list("experiment_id", flat=True)),
    }


def budget_plan_get(*, experiment: Experiment, cost_per_verdict: float, target: float | None = None) -> dict:
    """:func:`budget_plan_of` the latest snapshot."""
    snapshot = estimate_snapshot_latest(experiment=experiment)
    return budget_plan_of(
        experiment=experiment,
        stored=snapshot.estimates if snapshot is not None else None,
        judgements=snapshot.judgements if snapshot is not None else 0,
        cost_per_verdict=cost_per_verdict,
        target=target,
    )


def budget_plan_of(
    *,
    experiment: Experiment,
    stored: dict | None,
    judgements: int,
    cost_per_verdict: float,
    target: float | None = None,
) -> dict:
    """For each metric of a snapshot's estimates (``stored``, from ``judgements`` verdicts): its interval
    half-width now, and the further verdicts (and their cost) expected to bring it to ``target`` (the
    experiment's target half-width), with the estimates the headline decides on."""
    target = target or experiment.target_half_width
    rows = []
    for name, estimate in deciding_estimates(experiment, stored).items():
        low, high = estimate.get("ci_low"), estimate.get("ci_high")
        half_width = (high - low) / 2 if low is not None and high is not None else math.nan
        more = judgements_to_target(half_width=half_width, judgements=judgements, target_half_width=target)
        rows.append(
            {
                "metric": name,
                "half_width": json_number(half_width),
                "more_verdicts": json_number(more),
                "cost": json_number(more * cost_per_verdict),
            }
        )
    return {
        "target_half_width": target,
        "judgements": judgements if stored else 0,
        "model_assisted": decides_model_assisted(experiment, stored),
        "metrics": rows,
    }


def budget_changes_list(*, experiment: Experiment | None = None, pool: BudgetPool | None = None) -> QuerySet:
    """The audit log of a budget or a pool, newest first."""
    changes = BudgetChange.objects.select_related("actor")
    if experiment is not None:
        changes = changes.filter(budget__experiment=experiment)
    if pool is not None:
        changes = changes.filter(pool=pool)
    return changes.order_by("-created_at", "-pk")


def budget_ledger_totals_get() -> dict[str, dict[int, int]]:
    """What every budget (by experiment id) and pool (by id) has spent, recomputed from the
    ledger alone: ``{"budgets": {...}, "pools": {...}}``."""
    entries = BudgetLedgerEntry.objects.order_by()
    budgets = entries.filter(experiment__isnull=False).values_list("experiment").annotate(n=Sum("amount"))
    pools = entries.filter(pool__isnull=False).values_list("pool").annotate(n=Sum("amount"))
    return {"budgets": dict(budgets), "pools": dict(pools)}


def budget_ledger_mismatches_get() -> list[dict]:
    """Budgets and pools whose ``spent`` differs from the ledger's sum: empty when they agree."""
    ledger = budget_ledger_totals_get()
    stored = {
        "budgets": dict(ExperimentBudget.objects.values_list("experiment", "spent")),
        "pools": dict(BudgetPool.objects.values_list("pk", "spent")),
    }
    return [
        {"kind": kind, "id": key, "spent": stored[kind].get(key, 0), "ledger": ledger[kind].get(key, 0)}
        for kind in ("budgets", "pools")
        for key in sorted(stored[kind].keys() | ledger[kind].keys())
        if stored[kind].get(key, 0) != ledger[kind].get(key, 0)
    ]
