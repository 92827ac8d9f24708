"""The admins' overview: where the verdicts (and the money) went, how fast, and what is left.

Spend is counted in verdicts (every stored verdict, gold questions included, as budgets
count them) and in money (verdicts × the experiment's cost per verdict).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any, cast

from django.db.models import Count
from django.db.models.functions import TruncDate, TruncHour
from django.utils import timezone

from raterapp.models import BudgetPool, ExperimentBudget, Judgement
from raterapp.selectors.budgets import pool_summary_get

TOP_RATERS = 12


def spend_overview_get(*, days: int = 14) -> dict:
    """Budgets of every experiment and pool, verdicts per day per experiment and per rater
    over the last ``days`` days, and verdicts per hour over the last 24 hours."""
    now = timezone.now()
    since = (now - timedelta(days=days - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    budgets = list(ExperimentBudget.objects.select_related("experiment", "pool").order_by("-experiment__created_at"))
    cost_of = {budget.experiment_id: budget.cost_per_verdict for budget in budgets}
    recent = Judgement.objects.filter(created_at__gte=since)
    per_experiment = (
        recent.annotate(day=TruncDate("created_at")).values("day", "task__experiment").annotate(n=Count("pk"))
    )
    per_rater = recent.annotate(day=TruncDate("created_at")).values("day", "rater__username").annotate(n=Count("pk"))
    first_hour = (now - timedelta(hours=23)).replace(minute=0, second=0, microsecond=0)
    per_hour = dict(
        Judgement.objects.filter(created_at__gte=first_hour)
        .annotate(hour=TruncHour("created_at"))
        .values("hour")
        .annotate(n=Count("pk"))
        .values_list("hour", "n")
        .order_by()
    )
    hourly: list[dict[str, Any]] = [
        {"hour": hour, "n": per_hour.get(hour, 0)} for hour in (first_hour + timedelta(hours=k) for k in range(24))
    ]
    day_labels = [(since + timedelta(days=k)).date().isoformat() for k in range(days)]
    names = {budget.experiment_id: budget.experiment.name for budget in budgets}
    rater_totals: dict[str, int] = {}
    for row in per_rater:
        rater_totals[row["rater__username"]] = rater_totals.get(row["rater__username"], 0) + row["n"]
    top_raters = sorted(rater_totals, key=lambda name: (-rater_totals[name], name))[:TOP_RATERS]
    return {
        "days": day_labels,
        "experiments": [_budget_row(budget) for budget in budgets],
        "pools": [pool_summary_get(pool=pool) for pool in BudgetPool.objects.order_by("name")],
        "verdicts_per_day": _series(
            per_experiment, "task__experiment", day_labels, label=lambda key: names.get(key, f"#{key}")
        ),
        "cost_per_day": _series(
            per_experiment,
            "task__experiment",
            day_labels,
            label=lambda key: names.get(key, f"#{key}"),
            weight=lambda key: float(cost_of.get(key, Decimal(0))),
        ),
        "verdicts_per_rater_per_day": _series(
            [row for row in per_rater if row["rater__username"] in top_raters], "rater__username", day_labels
        ),
        "verdicts_per_hour": [{"hour": row["hour"].isoformat(), "verdicts": row["n"]} for row in hourly],
        "totals": {
            "verdicts": sum(budget.spent for budget in budgets),
            "cost": float(sum(budget.spent * budget.cost_per_verdict for budget in budgets)),
            "last_24h": sum(row["n"] for row in hourly),
        },
    }


def _budget_row(budget: ExperimentBudget) -> dict:
    experiment = budget.experiment
    limited = budget.max_verdicts is not None
    return {
        "experiment": experiment.pk,
        "name": experiment.name,
        "status": experiment.status,
        "status_label": experiment.get_status_display(),
        "max_verdicts": budget.max_verdicts,
        "spent": budget.spent,
        "remaining": max(cast(int, budget.max_verdicts) - budget.spent, 0) if limited else None,
        "cost_per_verdict": float(budget.cost_per_verdict),
        "spent_cost": float(budget.spent * budget.cost_per_verdict),
        "paused": budget.paused,
        "pool": cast(BudgetPool, budget.pool).name if budget.pool_id else None,
    }


def _series(rows, key: str, days: list[str], *, label=str, weight=lambda key: 1.0) -> list[dict]:
    """One series per ``key`` value: its count (times ``weight``) on each day."""
    by_key: dict = {}
    for row in rows:
        values = by_key.setdefault(row[key], [0.0] * len(days))
        day = row["day"].isoformat()
        if day in days:
            values[days.index(day)] += row["n"] * weight(row[key])
    series = [{"label": label(key), "values": values} for key, values in by_key.items()]
    return sorted(series, key=lambda s: (-sum(s["values"]), str(s["label"])))
