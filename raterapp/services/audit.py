"""The audit log of people and access (``AuditEntry``): one entry per changed value, written by
the service that makes the change, inside its transaction, so a change and its entry commit or
roll back together."""

from __future__ import annotations

from raterapp.models import AuditEntry


def audit_record(
    *,
    actor,
    action: str,
    subject_id: int,
    experiment_id: int | None = None,
    field: str = "",
    old=None,
    new=None,
    reason: str = "",
) -> AuditEntry:
    return AuditEntry.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        old_value=_text(old),
        new_value=_text(new),
        action=action,
        subject_id=subject_id,
        experiment_id=experiment_id,
        field=field,
        reason=reason,
    )


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)[:200]
