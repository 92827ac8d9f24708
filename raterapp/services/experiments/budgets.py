"""Judgement budgets: what an experiment (and a pool of experiments) may spend on verdicts.

Spending is enforced in the database, inside the transactions that lease pairs and record
verdicts (``judging/spending.py``): a verdict spends one unit of its experiment's budget and
of the budget's pool by conditional updates (``spent < max_verdicts``; no row updated means
refused and the verdict's transaction rolls back), so no interleaving of raters overspends;
a new pair is leased only while ``spent + live leases < max_verdicts``, with the budget (and
pool) row locked; an undone verdict gives its unit back, to the pool its spend charged.
Each spend and refund is appended to the ledger (``BudgetLedgerEntry``) in the same
transaction; ``selectors.budgets.budget_ledger_mismatches_get`` recomputes the totals from it.

Every change to a budget or pool goes through ``budget_update`` / ``pool_update`` here and
is written to the audit log (``BudgetChange``): who, when, from what to what, why, and
through which door (API, page, Django admin). Only admins change budgets.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from raterapp.access import ADMIN, require_role
from raterapp.models import BudgetChange, BudgetPool, Experiment, ExperimentBudget, PairTask
from raterapp.services.judging.progress import experiment_progress_recount
from raterapp.services.judging.spending import BudgetSpent

__all__ = ["BudgetSpent", "budget_create", "budget_update", "pool_create", "pool_update"]

BUDGET_FIELDS = ("max_verdicts", "cost_per_verdict", "paused", "pool", "replication")
MAX_REPLICATION = 20
POOL_FIELDS = ("name", "max_verdicts", "paused")
ADMINS_ONLY = "Only admins change budgets."


def budget_create(*, experiment: Experiment) -> ExperimentBudget:
    """The new experiment's budget row, allowing ``NEW_EXPERIMENT_BUDGET`` verdicts until an admin
    changes it, so spending is one conditional update on an existing row. Created once, with
    the experiment (``experiment_create``); reads never create it."""
    return ExperimentBudget.objects.create(experiment=experiment, max_verdicts=settings.NEW_EXPERIMENT_BUDGET)


# ---- changes, with the audit log ------------------------------------------------------


def budget_update(*, budget: ExperimentBudget, actor, changes: dict, reason: str, via: str) -> ExperimentBudget:
    """Change an experiment's budget (admins only); one audit entry per changed field.

    ``changes`` may hold ``max_verdicts`` (None: no limit), ``cost_per_verdict``, ``paused``,
    ``pool`` (a BudgetPool or None) and ``replication`` (verdicts wanted per sampled pair,
    1 to ``MAX_REPLICATION``). A maximum below what is spent is allowed: every verdict
    stays and no pair is leased any more. Lowering the replication keeps every verdict too:
    a pair that has more verdicts than the new replication keeps wanting what it has.
    """
    require_role(actor, ADMIN, ADMINS_ONLY)
    values = _clean_budget_changes(changes)
    replication = values.pop("replication", None)
    with transaction.atomic():
        budget = ExperimentBudget.objects.select_for_update().get(pk=budget.pk)
        changed = _apply(budget, values, actor=actor, reason=reason, via=via, subject={"budget": budget})
        if replication is not None and _replication_set(budget, replication, actor=actor, reason=reason, via=via):
            changed.append("replication")
        if changed:
            _dashboards_outdated(Experiment.objects.filter(pk=budget.experiment_id))
    return budget


def _replication_set(budget: ExperimentBudget, replication: int, *, actor, reason: str, via: str) -> bool:
    experiment = Experiment.objects.select_for_update().get(pk=budget.experiment_id)
    if experiment.replication == replication:
        return False
    BudgetChange.objects.create(
        budget=budget,
        actor=actor,
        field="replication",
        old_value=str(experiment.replication),
        new_value=str(replication),
        reason=reason,
        via=via,
    )
    experiment.replication = replication
    experiment.save(update_fields=["replication", "updated_at"])
    PairTask.objects.sampled().filter(experiment=experiment).update(wanted=Greatest(F("verdicts"), replication))
    experiment_progress_recount(experiment_id=experiment.pk)
    return True


def pool_create(*, actor, name: str, max_verdicts: int, reason: str, via: str) -> BudgetPool:
    require_role(actor, ADMIN, ADMINS_ONLY)
    values = _clean_pool_changes({"name": name, "max_verdicts": max_verdicts})
    values["name"] = str(values["name"]).strip()
    if BudgetPool.objects.filter(name__iexact=values["name"]).exists():
        raise ValidationError({"name": "A pool with this name exists already."})
    with transaction.atomic():
        pool = BudgetPool.objects.create(**values)
        for field, value in values.items():
            BudgetChange.objects.create(
                pool=pool, actor=actor, field=field, old_value="", new_value=_text(value), reason=reason, via=via
            )
    return pool


def pool_update(*, pool: BudgetPool, actor, changes: dict, reason: str, via: str) -> BudgetPool:
    """Change a pool (admins only); one audit entry per changed field."""
    require_role(actor, ADMIN, ADMINS_ONLY)
    values = _clean_pool_changes(changes)
    if "name" in values:
        values["name"] = str(values["name"]).strip()
        if BudgetPool.objects.filter(name__iexact=values["name"]).exclude(pk=pool.pk).exists():
            raise ValidationError({"name": "A pool with this name exists already."})
    with transaction.atomic():
        pool = BudgetPool.objects.select_for_update().get(pk=pool.pk)
        if _apply(pool, values, actor=actor, reason=reason, via=via, subject={"pool": pool}):
            _dashboards_outdated(Experiment.objects.filter(budget__pool=pool))
    return pool


def _dashboards_outdated(experiments) -> None:
    """Open dashboards poll with the experiment's ``updated_at`` in their ETag: move it."""
    experiments.update(updated_at=timezone.now())


def _apply(record, values: dict, *, actor, reason: str, via: str, subject: dict) -> list[str]:
    changed = []
    for field, value in values.items():
        old = getattr(record, field)
        if old == value:
            continue
        BudgetChange.objects.create(
            **subject, actor=actor, field=field, old_value=_text(old), new_value=_text(value), reason=reason, via=via
        )
        setattr(record, field, value)
        changed.append(field)
    if changed:
        record.save(update_fields=changed)
    return changed


def _known_changes(changes: dict, fields: tuple[str, ...], what: str) -> dict:
    unknown = set(changes) - set(fields)
    if unknown:
        raise ValidationError({name: f"Not a {what} setting." for name in sorted(unknown)})
    return dict(changes)


def _check_paused(values: dict) -> None:
    if "paused" in values and not isinstance(values["paused"], bool):
        raise ValidationError({"paused": "Give true or false."})


def _clean_budget_changes(changes: dict) -> dict:
    values = _known_changes(changes, BUDGET_FIELDS, "budget")
    if "max_verdicts" in values and values["max_verdicts"] is not None:
        values["max_verdicts"] = _count("max_verdicts", values["max_verdicts"])
    if "cost_per_verdict" in values:
        try:
            cost = Decimal(str(values["cost_per_verdict"]))
        except InvalidOperation:
            raise ValidationError({"cost_per_verdict": "Give a number."}) from None
        if not cost.is_finite() or cost < 0 or cost >= Decimal("1e8"):
            raise ValidationError({"cost_per_verdict": "Give a number from 0 to 99,999,999."})
        values["cost_per_verdict"] = cost.quantize(Decimal("0.0001"))
    _check_paused(values)
    if "replication" in values and not (
        isinstance(values["replication"], int) and 1 <= values["replication"] <= MAX_REPLICATION
    ):
        raise ValidationError({"replication": f"Give a whole number of verdicts per pair from 1 to {MAX_REPLICATION}."})
    if "pool" in values and values["pool"] is not None and not isinstance(values["pool"], BudgetPool):
        raise ValidationError({"pool": "No such pool."})
    return values


def _clean_pool_changes(changes: dict) -> dict:
    values = _known_changes(changes, POOL_FIELDS, "pool")
    if "max_verdicts" in values:
        values["max_verdicts"] = _count("max_verdicts", values["max_verdicts"])
    if "name" in values and not str(values["name"]).strip():
        raise ValidationError({"name": "Give the pool a name."})
    _check_paused(values)
    return values


def _count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > 2**31 - 1:
        raise ValidationError({name: "Give a whole number of verdicts, 0 or more."})
    return value


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, BudgetPool):
        return f"{value.name} (#{value.pk})"
    return str(value)
