"""The transactional outbox, API tokens and the audit log."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from .experiments import Experiment


class OutboxMessage(models.Model):
    """A side effect (enqueueing a task, scheduling a refresh) written in the transaction of the
    data that asks for it, so that it commits or rolls back with it (a transactional outbox).

    Dispatched right after the commit when the broker answers, else by the periodic reconciler
    (``services/outbox.py``); a row exists until its effect was handed to the broker.
    """

    class Kind(models.TextChoices):
        """The side effect: one Celery task each (``raterapp/tasks.py``), handed to the
        broker by ``services/outbox.py`` right after the commit, or by the reconciler when the
        broker was away."""

        EXPERIMENT_PREPARE = "experiment_prepare", "Prepare an experiment"
        SAMPLE_BATCH_DRAW = "sample_batch_draw", "Draw a sample batch"
        ESTIMATES_REFRESH = "estimates_refresh", "Refresh the estimates"
        DERIVED_REFRESH = "derived_refresh", "Refresh ΔRecall and IQ"
        RATER_AUTO_PAUSE = "rater_auto_pause", "Check a rater's quality flags"

    kind = models.CharField(max_length=40, choices=Kind.choices)
    target_id = models.BigIntegerField(help_text="The experiment, batch or rater the effect is about.")
    created_at = models.DateTimeField(auto_now_add=True)
    claimed_by = models.UUIDField(null=True, blank=True, help_text="The dispatcher handing it to the broker now.")
    claimed_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Failed dispatches so far.")
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["kind", "target_id"], name="outbox_effect")]

    def __str__(self) -> str:
        return f"{self.kind} {self.target_id}"


class ApiToken(models.Model):
    """A key for scripts (``Authorization: Token <key>``). Only the SHA-256 of the key is kept:
    the key itself is shown once, when it is made. It stops working at ``expires_at``, when it
    is revoked (by its owner or an admin), or when its user is deactivated."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, help_text="What the token is for, as its owner named it.")
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key, hex.")
    prefix = models.CharField(max_length=12, help_text="The key's first characters, to tell tokens apart.")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.prefix}… of {self.user}"


class AuditEntry(models.Model):
    """The audit log of people and access: raters' quotas, pauses and assignments, users'
    roles and activity, API tokens. Budgets keep theirs in ``BudgetChange``. Written by the
    services in the transaction of the change it records."""

    class Action(models.TextChoices):
        QUOTA = "rater.quota", "Quota changed"
        PAUSE = "rater.pause", "Rater paused"
        UNPAUSE = "rater.unpause", "Rater unpaused"
        ASSIGN = "rater.assign", "Assigned to an experiment"
        UNASSIGN = "rater.unassign", "Unassigned from an experiment"
        ROLES = "user.roles", "Roles changed"
        ACTIVE = "user.active", "Activated or deactivated"
        TOKEN_CREATE = "token.create", "API token created"
        TOKEN_REVOKE = "token.revoke", "API token revoked"
        EXPERIMENT_DELETE = "experiment.delete", "Failed experiment deleted"
        VERDICT_CHANGE = "verdict.change", "Verdict changed by its rater"
        VERDICT_VOID = "verdict.void", "Verdicts voided"

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Who made the change; empty for the app's own (the automatic pause).",
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    subject = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="audit_entries", help_text="The user changed."
    )
    experiment = models.ForeignKey(Experiment, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    field = models.CharField(max_length=40, blank=True)
    old_value = models.CharField(max_length=200, blank=True)
    new_value = models.CharField(max_length=200, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["subject", "created_at"], name="audit_subject")]
        verbose_name = "audit entry"
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.get_action_display()}: {self.subject}"
