"""The audit log of people and access, newest first, for admins' pages and the API."""

from __future__ import annotations

from django.db.models import QuerySet

from raterapp.models import AuditEntry


def audit_entries_list(*, subject_id: int | None = None, experiment_id: int | None = None) -> QuerySet[AuditEntry]:
    """Entries about one user and/or one experiment (``None``: any), newest first."""
    entries = AuditEntry.objects.select_related("actor", "subject", "experiment")
    if subject_id is not None:
        entries = entries.filter(subject_id=subject_id)
    if experiment_id is not None:
        entries = entries.filter(experiment_id=experiment_id)
    return entries
