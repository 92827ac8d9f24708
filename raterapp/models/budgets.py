"""Budgets, pools, their audit log and the append-only ledger."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .experiments import Experiment


class BudgetPool(models.Model):
    """Verdicts shared by several experiments: each verdict of any of them spends one."""

    name = models.CharField(max_length=200, unique=True)
    max_verdicts = models.PositiveIntegerField(help_text="Verdicts the pool pays for in all.")
    spent = models.PositiveIntegerField(default=0, help_text="Verdicts given in its experiments.")
    paused = models.BooleanField(default=False, help_text="No new pairs are leased while paused.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(spent__gte=0), name="budget_pool_spent_not_negative")]

    def __str__(self) -> str:
        return self.name


class ExperimentBudget(models.Model):
    """What an experiment may spend on verdicts. ``max_verdicts`` null: no limit.

    ``spent`` counts the experiment's stored verdicts (gold questions included: raters are
    paid for them too) and moves with them in the same transaction, by conditional updates,
    so no interleaving of raters spends more than ``max_verdicts``. Lowering the maximum
    below ``spent`` keeps every verdict and stops new leases.
    """

    experiment = models.OneToOneField(Experiment, on_delete=models.CASCADE, related_name="budget")
    max_verdicts = models.PositiveIntegerField(null=True, blank=True)
    cost_per_verdict = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    spent = models.PositiveIntegerField(default=0)
    paused = models.BooleanField(default=False)
    pool = models.ForeignKey(BudgetPool, null=True, blank=True, on_delete=models.PROTECT, related_name="budgets")

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(spent__gte=0), name="budget_spent_not_negative")]

    def __str__(self) -> str:
        return f"Budget of {self.experiment}"


class BudgetChange(models.Model):
    """The audit log: every change to a budget or pool, by whom, when, from what to what, why."""

    class Via(models.TextChoices):
        API = "api", "API"
        PAGE = "page", "Page"
        ADMIN = "admin", "Django admin"

    budget = models.ForeignKey(
        ExperimentBudget, null=True, blank=True, on_delete=models.CASCADE, related_name="changes"
    )
    pool = models.ForeignKey(BudgetPool, null=True, blank=True, on_delete=models.CASCADE, related_name="changes")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    field = models.CharField(max_length=40)
    old_value = models.CharField(max_length=100, blank=True)
    new_value = models.CharField(max_length=100, blank=True)
    reason = models.TextField(blank=True)
    via = models.CharField(max_length=10, choices=Via.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(budget__isnull=False) | Q(pool__isnull=False), name="budget_change_has_subject"
            )
        ]


class AppendOnly(Exception):
    """A ledger entry is never changed nor deleted: a correction is a new entry."""


class LedgerQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnly("Ledger entries are never updated.")

    def delete(self):
        raise AppendOnly("Ledger entries are never deleted.")

    def bulk_update(self, objs, fields, batch_size=None):
        raise AppendOnly("Ledger entries are never updated.")


class BudgetLedgerEntry(models.Model):
    """Append-only: every unit a verdict spends of a budget (and of the pool charged), and
    every unit given back, written in the transaction that moves ``spent``; the totals are
    the sums of ``amount`` per experiment and per pool. A refund names the pool its spend
    charged, whichever pool the experiment is in now. ``opening`` entries carry the totals
    from before the ledger. References survive the rows they name (no foreign-key constraint),
    so deleting an experiment leaves its history."""

    class Kind(models.TextChoices):
        SPEND = "spend", "Spend"
        REFUND = "refund", "Refund"
        OPENING = "opening", "Opening balance"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    experiment = models.ForeignKey(
        Experiment, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    pool = models.ForeignKey(
        BudgetPool, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    rater = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    verdict = models.UUIDField(null=True, blank=True, help_text="The verdict's client_id.")
    amount = models.IntegerField(help_text="Verdicts: positive spent, negative given back.")
    cost = models.DecimalField(max_digits=14, decimal_places=4, default=0, help_text="At the cost of that moment.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = LedgerQuerySet.as_manager()

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="spend", amount__gt=0) | Q(kind="refund", amount__lt=0) | Q(kind="opening"),
                name="ledger_amount_sign_follows_kind",
            ),
            models.UniqueConstraint(fields=["verdict", "kind"], condition=~Q(kind="opening"), name="ledger_once"),
        ]

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnly("Ledger entries are never updated.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("Ledger entries are never deleted.")
