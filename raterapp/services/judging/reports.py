"""A rater's report that a pair cannot be judged."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from raterapp.db.locks import serialise_writers_on_sqlite, task_lock
from raterapp.models import Judgement, Lease, PairReport, PairTask

from .errors import JudgementRefused


def pair_report_create(*, task: PairTask, rater, reason: str, note: str = "") -> tuple[PairReport, bool]:
    """Report a pair the rater holds as broken; ``(report, created)``.

    The rater's lease is released and the pair never comes back to them; it stays
    unjudged (other raters may still judge it) and is listed for admins. Reporting the
    same pair again returns the first report. Raises :class:`JudgementRefused` when the
    rater judged the pair or does not hold it.
    """
    if reason not in PairReport.Reason.values:
        raise ValidationError({"reason": f"Must be one of {', '.join(PairReport.Reason.values)}."})
    existing = PairReport.objects.filter(task=task, rater=rater).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            serialise_writers_on_sqlite(task.experiment_id)
            task_lock(task.pk)
            if Judgement.objects.filter(task=task, rater=rater).exists():
                raise JudgementRefused("You already judged this pair.")
            if not Lease.objects.filter(task=task, rater=rater).delete()[0]:
                raise JudgementRefused("This pair is not assigned to you.")
            return PairReport.objects.create(task=task, rater=rater, reason=reason, note=note), True
    except (IntegrityError, JudgementRefused):
        existing = PairReport.objects.filter(task=task, rater=rater).first()
        if existing is not None:
            return existing, False
        raise
