"""What the admin console lists: experiments with their assigned raters, the raters, the pools
with their experiments and spend, the audit log of budgets and what admins did to pairs."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Prefetch, QuerySet

from raterapp.access import RATER
from raterapp.models import BudgetChange, BudgetPool, Experiment, ExperimentBudget, PairReport, PairTask

Status = Experiment.Status
LIVE = (Status.RATING, Status.DONE, Status.SAMPLING, Status.QUEUED, Status.VALIDATING, Status.COMPUTING_IMPACT)


def raters_list(*, active_only: bool = True) -> QuerySet:
    """Raters by name: the active ones, or all."""
    raters = get_user_model().objects.filter(groups__name=RATER)
    if active_only:
        raters = raters.filter(is_active=True)
    return raters.order_by("username").distinct()


def experiments_for_console() -> QuerySet[Experiment]:
    """Experiments that are not archived nor failed, newest first, with their assigned raters."""
    raters = get_user_model().objects.order_by("username")
    return (
        Experiment.objects.filter(archived_at__isnull=True, status__in=LIVE)
        .prefetch_related(Prefetch("assigned_raters", queryset=raters))
        .order_by("-created_at", "-pk")
    )


def experiments_with_sample() -> QuerySet[Experiment]:
    """Experiments whose pairs are drawn (rating or done), newest first: those gold questions fit."""
    return Experiment.objects.filter(status__in=(Status.RATING, Status.DONE)).order_by("-created_at", "-pk")


def pools_with_experiments() -> list[dict]:
    """Every pool with its spend and the experiments it pays for."""
    budgets = ExperimentBudget.objects.select_related("experiment").order_by("experiment__name")
    rows = []
    for pool in BudgetPool.objects.prefetch_related(Prefetch("budgets", queryset=budgets)).order_by("name"):
        rows.append(
            {
                "pool": pool,
                "remaining": max(pool.max_verdicts - pool.spent, 0),
                "spent_share": pool.spent / pool.max_verdicts if pool.max_verdicts else 1.0,
                "experiments": [_with_spend(budget) for budget in pool.budgets.all()],
            }
        )
    return rows


def _with_spend(budget: ExperimentBudget) -> Experiment:
    experiment = budget.experiment
    experiment.spent = budget.spent  # type: ignore[attr-defined]  # for the template
    return experiment


def budget_changes_recent(
    *, limit: int = 200, actor_id: int | None = None, experiment_id: int | None = None
) -> QuerySet[BudgetChange]:
    """The latest entries of the budget audit log, newest first: made by one person and/or about
    one experiment's budget (``None``: any)."""
    changes = BudgetChange.objects.select_related("actor", "budget__experiment", "pool")
    if actor_id is not None:
        changes = changes.filter(actor_id=actor_id)
    if experiment_id is not None:
        changes = changes.filter(budget__experiment_id=experiment_id)
    return changes.order_by("-created_at", "-pk")[:limit]


def console_actions_recent(
    *, limit: int = 100, actor_id: int | None = None, experiment_id: int | None = None
) -> list[dict]:
    """What admins did to pairs, newest first, from the records themselves: reports resolved
    (with the note) and pairs retired (gold questions, excluded pairs); made by one person
    and/or in one experiment (``None``: any)."""
    reports = PairReport.objects.filter(resolved_at__isnull=False)
    retired = PairTask.objects.filter(retired_at__isnull=False)
    if actor_id is not None:
        reports, retired = reports.filter(resolved_by_id=actor_id), retired.filter(retired_by_id=actor_id)
    if experiment_id is not None:
        reports, retired = (
            reports.filter(task__experiment_id=experiment_id),
            retired.filter(experiment_id=experiment_id),
        )
    reports = reports.select_related("resolved_by", "task__experiment").order_by("-resolved_at")[:limit]
    retired = retired.select_related("retired_by", "experiment").order_by("-retired_at")[:limit]
    rows: list[dict[str, Any]] = [
        {
            "when": report.resolved_at,
            "who": report.resolved_by,
            "experiment": report.task.experiment,
            "what": f"Report {report.pk} resolved: {report.get_resolution_display().lower()}",
            "why": report.resolution_note,
        }
        for report in reports
    ] + [
        {
            "when": task.retired_at,
            "who": task.retired_by,
            "experiment": task.experiment,
            "what": f"Gold question {task.pk} retired" if task.gold_answer else f"Pair task {task.pk} excluded",
            "why": "",
        }
        for task in retired
    ]
    return sorted(rows, key=lambda row: row["when"], reverse=True)[:limit]
