"""The audit log of people and access, newest first, for the console's audit page and the API
(``GET /api/audit/``): both read it through :func:`audit_entries_list`, with the same filters."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from raterapp.models import AuditEntry, BudgetChange, Experiment

KINDS = tuple(AuditEntry.Action.choices)


def audit_entries_list(
    *,
    subject_id: int | None = None,
    experiment_id: int | None = None,
    action: str | None = None,
    actor_id: int | None = None,
) -> QuerySet[AuditEntry]:
    """Entries about one user, one experiment, of one kind (``action``) and/or made by one
    person (``actor_id``); ``None``: any. Newest first."""
    entries = AuditEntry.objects.select_related("actor", "subject", "experiment")
    filters = {"subject_id": subject_id, "experiment_id": experiment_id, "action": action, "actor_id": actor_id}
    entries = entries.filter(**{name: value for name, value in filters.items() if value is not None})
    return entries.order_by("-created_at", "-pk")


def audit_actors_list() -> QuerySet:
    """Everyone who made a change the audit log or the budget log records, by name."""
    ids = set(AuditEntry.objects.filter(actor__isnull=False).values_list("actor_id", flat=True))
    ids |= set(BudgetChange.objects.filter(actor__isnull=False).values_list("actor_id", flat=True))
    return get_user_model().objects.filter(pk__in=ids).order_by("username")


def audit_experiments_list() -> QuerySet[Experiment]:
    """Experiments the audit log or the budget log mention, newest first."""
    ids = set(AuditEntry.objects.filter(experiment__isnull=False).values_list("experiment_id", flat=True))
    ids |= set(BudgetChange.objects.filter(budget__isnull=False).values_list("budget__experiment_id", flat=True))
    return Experiment.objects.filter(pk__in=ids).order_by("-created_at", "-pk")
