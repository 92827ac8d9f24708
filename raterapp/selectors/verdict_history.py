"""A rater's own recent verdicts (the judging page's history strip, from the server so that it
survives a reload), and an admin's view of a rater's verdicts before voiding them."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from raterapp.models import AuditEntry, Judgement

from .judging import task_cards_get

HISTORY_LIMIT = 50


def rater_recent_verdicts_list(*, rater, experiment) -> list[dict]:
    """The rater's verdicts in the experiment of the last ``UNDO_SECONDS`` (those they may still
    change), newest first, each with the pair's two cards as the rater sees them."""
    since = timezone.now() - timedelta(seconds=settings.UNDO_SECONDS)
    judgements = (
        Judgement.objects.filter(rater=rater, task__experiment=experiment, created_at__gte=since)
        .select_related("task__item_a", "task__item_b")
        .order_by("-created_at", "-pk")[:HISTORY_LIMIT]
    )
    rows = []
    for judgement in judgements:
        left, right = task_cards_get(task=judgement.task, rater=rater)
        rows.append(
            {
                "id": judgement.pk,
                "task": judgement.task_id,
                "verdict": judgement.verdict,
                "comment": judgement.comment,
                "client_id": judgement.client_id,
                "created_at": judgement.created_at,
                "left": left,
                "right": right,
            }
        )
    return rows


def rater_verdicts_in_range(*, rater, since: datetime, until: datetime) -> QuerySet[Judgement]:
    """The rater's verdicts given in ``[since, until)``, newest first, with their experiments."""
    return (
        Judgement.objects.filter(rater=rater, created_at__gte=since, created_at__lt=until)
        .select_related("task__experiment")
        .order_by("-created_at", "-pk")
    )


def verdict_audit_recent(*, limit: int = 50) -> QuerySet[AuditEntry]:
    """The latest changes and voids of verdicts in the audit log, newest first."""
    actions = (AuditEntry.Action.VERDICT_CHANGE, AuditEntry.Action.VERDICT_VOID)
    return AuditEntry.objects.filter(action__in=actions).select_related("actor", "subject", "experiment")[:limit]
