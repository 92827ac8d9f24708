"""Putting verdicts right: a rater changes one of their recent verdicts; an admin voids one
verdict, or all of a rater's verdicts in a time range, with a reason. Both are audited
(``AuditEntry``), in the transaction of the change.

A change keeps the verdict's row (its budget unit, its slot and its ``client_id`` stay spent:
the count of verdicts is the same) and recomputes the estimates. A void is the undo's reversal
(:func:`.reversal.verdict_reverse`) done by an admin: the verdict leaves every count, its unit
goes back to the budget and the pool it charged, and the pair is offered again while its
replication asks for it; the voided verdict is kept as a ``RetractedJudgement`` with who voided it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from raterapp.access import ADMIN, RATER, has_role
from raterapp.db.locks import rater_and_task_lock, rater_lock, serialise_writers_on_sqlite
from raterapp.models import AuditEntry, Judgement, OutboxMessage, PairTask, ReusedVerdict, Verdict
from raterapp.services.audit import audit_record
from raterapp.services.outbox import outbox_add

from .errors import JudgementRefused
from .reversal import verdict_reverse

MAX_VOIDED = 5000  # verdicts one void may take back (one transaction)


def judgement_change(*, judgement_id: int, rater, verdict: str, comment: str | None = None) -> Judgement:
    """Change one of the rater's own verdicts of the last ``UNDO_SECONDS`` (any of them, also
    after a reload) to ``verdict`` (and ``comment``, when given). Raises
    :class:`JudgementRefused` for a verdict that is not theirs (or was undone or voided) or is too
    old; the same answer again changes nothing and records nothing."""
    if verdict not in Verdict.values:
        raise ValidationError({"verdict": f"Must be one of {', '.join(Verdict.values)}."})
    if not has_role(rater, RATER):
        raise PermissionDenied("Only raters change their verdicts.")
    found = Judgement.objects.filter(pk=judgement_id, rater=rater).values_list("task_id", "task__experiment_id").first()
    if found is None:
        raise JudgementRefused("There is no such verdict of yours.")
    task_id, experiment_id = found
    with transaction.atomic():
        serialise_writers_on_sqlite(experiment_id)
        rater_and_task_lock(rater.pk, task_id)
        judgement = Judgement.objects.select_related("task").filter(pk=judgement_id, rater=rater).first()
        if judgement is None:
            raise JudgementRefused("This verdict was undone or voided.")
        if timezone.now() - judgement.created_at > timedelta(seconds=settings.UNDO_SECONDS):
            raise JudgementRefused(f"Verdicts can be changed for {settings.UNDO_SECONDS // 60} minutes only.")
        comment = judgement.comment if comment is None else comment
        if (verdict, comment) == (judgement.verdict, judgement.comment):
            return judgement
        old = judgement.verdict
        Judgement.objects.filter(pk=judgement.pk).update(verdict=verdict, comment=comment)
        judgement.verdict, judgement.comment = verdict, comment
        audit_record(
            actor=rater,
            action=AuditEntry.Action.VERDICT_CHANGE,
            subject_id=rater.pk,
            experiment_id=experiment_id,
            field=f"verdict #{judgement.pk}",
            old=old,
            new=verdict,
        )
        for target in _experiments_counting(judgement):
            outbox_add(kind=OutboxMessage.Kind.ESTIMATES_REFRESH, target_id=target)
    return judgement


def _experiments_counting(judgement: Judgement) -> list[int]:
    """The experiments whose estimates count the verdict: its own (a gold question's too, whose
    staleness reads the audit log like any other's) and those that reuse it."""
    reusing = ReusedVerdict.objects.filter(source_id=judgement.pk).values_list("experiment_id", flat=True)
    return sorted({judgement.task.experiment_id, *reusing})


def judgements_void(
    *,
    actor,
    reason: str,
    judgement_id: int | None = None,
    rater=None,
    since: datetime | None = None,
    until: datetime | None = None,
    experiment_id: int | None = None,
) -> list[int]:
    """Void one verdict (``judgement_id``), or all of ``rater``'s given in ``[since, until)`` (in
    ``experiment_id`` only, when given); the ids voided. One audit entry per experiment touched,
    with the reason, the range and the count.

    Refused with ``PermissionDenied`` for anyone but an admin, and with ``ValidationError``
    without a reason, with an empty or reversed range, or when nothing matches; a refusal writes
    nothing. The rater's lock is taken first (their submits, undos and leases wait), then the
    tasks' in id order, as every writer of a task takes them."""
    if not has_role(actor, ADMIN):
        raise PermissionDenied("Only admins void verdicts.")
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": "Say why the verdicts are voided."})
    if judgement_id is None:
        if rater is None or since is None or until is None:
            raise ValidationError("Name one verdict, or a rater with the start and end of a time range.")
        if until <= since:
            raise ValidationError({"until": "The end of the range must come after its start."})
    else:
        rater_id = Judgement.objects.filter(pk=judgement_id).values_list("rater_id", flat=True).first()
        if rater_id is None:
            raise ValidationError({"judgement": "There is no such verdict (it may have been undone or voided)."})
        rater = get_user_model().objects.get(pk=rater_id)
    anchor = Judgement.objects.filter(rater=rater).values_list("task__experiment_id", flat=True).first()
    with transaction.atomic():
        if anchor is not None:
            serialise_writers_on_sqlite(anchor)  # SQLite: write first, then read (a no-op elsewhere)
        rater_lock(rater.pk)
        query = Judgement.objects.select_related("task").filter(rater=rater).order_by("task_id")
        if judgement_id is not None:
            query = query.filter(pk=judgement_id)
        else:
            query = query.filter(created_at__gte=since, created_at__lt=until)
            if experiment_id is not None:
                query = query.filter(task__experiment_id=experiment_id)
        judgements = list(query[: MAX_VOIDED + 1])
        if not judgements:
            raise ValidationError("No verdict matches: nothing was voided.")
        if len(judgements) > MAX_VOIDED:
            raise ValidationError(f"More than {MAX_VOIDED} verdicts match: void a shorter range.")
        list(
            PairTask.objects.select_for_update()
            .filter(pk__in=[j.task_id for j in judgements])
            .order_by("pk")
            .values_list("pk")
        )
        for judgement in judgements:
            judgement.rater = rater
            verdict_reverse(judgement=judgement, voided_by=actor)
        _void_audit(actor=actor, rater=rater, judgements=judgements, reason=reason, since=since, until=until)
    return [judgement.pk for judgement in judgements]


def _void_audit(*, actor, rater, judgements: list[Judgement], reason: str, since, until) -> None:
    by_experiment: dict[int, list[int]] = {}
    for judgement in judgements:
        by_experiment.setdefault(judgement.task.experiment_id, []).append(judgement.pk)
    if since is None:
        what = f"verdict #{judgements[0].pk}"
    else:
        what = f"{timezone.localtime(since):%Y-%m-%d %H:%M:%S} to {timezone.localtime(until):%Y-%m-%d %H:%M:%S}"
    for experiment_id, ids in sorted(by_experiment.items()):
        audit_record(
            actor=actor,
            action=AuditEntry.Action.VERDICT_VOID,
            subject_id=rater.pk,
            experiment_id=experiment_id,
            field="verdicts",
            old=what,
            new=f"{len(ids)} voided",
            reason=reason,
        )
