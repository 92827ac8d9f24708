"""Recording verdicts, and taking recent ones back."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from raterapp.access import RATER, has_role
from raterapp.db.locks import rater_and_task_lock, rater_lock, serialise_writers_on_sqlite, task_lock
from raterapp.models import AuditEntry, Judgement, Lease, OutboxMessage, PairTask, RetractedJudgement, Verdict
from raterapp.services.audit import audit_record
from raterapp.services.outbox import outbox_add, outbox_dispatch_on_commit

from .errors import JudgementRefused
from .progress import experiment_progress_move
from .queue import MAX_HELD
from .quotas import quota_consume
from .reversal import verdict_reverse
from .spending import budget_consume
from .store import one_statement_writes, submit_state, verdict_store

# A rater may take back any of their verdicts of the last UNDO_SECONDS; each undo leases its pair
# back, so a rater holds at most UNDONE_HELD pairs beyond MAX_HELD: answer one, then undo again.
UNDONE_HELD = 5
MAX_HELD_WITH_UNDONE = MAX_HELD + UNDONE_HELD


def judgement_submit(*, task: PairTask, rater, verdict: str, client_id, comment: str = "") -> tuple[Judgement, bool]:
    """Record a rater's verdict on a task; ``(judgement, created)``.

    Idempotent by ``client_id``: a retry returns the stored judgement with
    ``created=False``; a ``client_id`` already used for another task or rater is a
    ``ValidationError``. Raises :class:`JudgementRefused` when the rater already judged
    the task, never held a lease on it, the task has all its verdicts, the verdict
    of this ``client_id`` was undone, (``QuotaSpent``) the rater's quota is used up, or
    (``BudgetSpent``) the budget is spent; a refusal writes nothing. A late
    verdict (its lease expired, and maybe the pair went to someone else meanwhile) is kept
    while the task wants verdicts; leases it over-promises are withdrawn. With the verdict, the
    outbox records a (debounced) recompute of the estimates, and with ``RATER_AUTO_PAUSE`` a
    check of the rater's quality flags (at most once a minute per rater).
    """
    if verdict not in Verdict.values:
        raise ValidationError({"verdict": f"Must be one of {', '.join(Verdict.values)}."})
    client_id = _uuid(client_id)
    if not has_role(rater, RATER):
        raise PermissionDenied("Only raters submit verdicts.")
    try:
        with transaction.atomic():
            judgement = _judgement_record(task=task, rater=rater, verdict=verdict, client_id=client_id, comment=comment)
    except (IntegrityError, JudgementRefused) as exc:
        # A retry (its original committed before, or while we waited for the locks), or an undone one.
        retried = _retry_of(client_id=client_id, task=task, rater=rater)
        if retried is not None:
            return retried, False
        if isinstance(exc, IntegrityError):
            raise JudgementRefused("You already judged this pair.") from None
        raise
    return judgement, True


def judgement_undo(*, judgement_id: int, rater) -> PairTask:
    """Take back one of the rater's verdicts of the last ``UNDO_SECONDS``, any of them; undoing
    several, one after the other, steps back through them.

    The verdict moves to :class:`RetractedJudgement` (kept, counted nowhere), the task
    gets its slot and the budget its unit back, and the task is leased to the rater again,
    who judges it afresh (a new submit with a new ``client_id``). Returns the task with its
    ``lease``. Raises :class:`JudgementRefused` for someone else's, an undone or a too old
    verdict, and when the rater already holds ``MAX_HELD_WITH_UNDONE`` pairs of the
    experiment (answer one first). The rater's lock comes first, as for a lease request, so
    a rater's undos and leases are counted one at a time.
    """
    judgement = Judgement.objects.select_related("task").filter(pk=judgement_id, rater=rater).first()
    if judgement is None:
        raise JudgementRefused("There is no such verdict of yours.")
    task = judgement.task
    with transaction.atomic():
        serialise_writers_on_sqlite(task.experiment_id)
        rater_lock(rater.pk)
        task_lock(task.pk)
        _undo_check(judgement=judgement, rater=rater)
        verdict_reverse(judgement=judgement)
        # The first half of a change of mind (the new answer is a new verdict): audited as a change.
        audit_record(
            actor=rater,
            action=AuditEntry.Action.VERDICT_CHANGE,
            subject_id=rater.pk,
            experiment_id=task.experiment_id,
            field=f"verdict #{judgement.pk}",
            old=judgement.verdict,
            new="undone, to answer again",
        )
        task.lease, _ = Lease.objects.update_or_create(
            task=task,
            rater=rater,
            defaults={"expires_at": timezone.now() + timedelta(seconds=settings.LEASE_SECONDS), "token": uuid.uuid4()},
        )
    task.refresh_from_db(fields=["verdicts"])
    return task


def _undo_check(*, judgement: Judgement, rater) -> None:
    """Refuse an undo (nothing written); called with the rater's and the task's rows locked."""
    experiment_id = judgement.task.experiment_id
    if not Judgement.objects.filter(pk=judgement.pk).exists():
        raise JudgementRefused("This verdict was already undone.")
    if timezone.now() - judgement.created_at > timedelta(seconds=settings.UNDO_SECONDS):
        raise JudgementRefused(f"Verdicts can be undone for {settings.UNDO_SECONDS // 60} minutes only.")
    held = Lease.objects.filter(rater=rater, task__experiment_id=experiment_id, expires_at__gt=timezone.now())
    if held.exclude(task_id=judgement.task_id).count() >= MAX_HELD_WITH_UNDONE:
        raise JudgementRefused(f"You already hold {MAX_HELD_WITH_UNDONE} pairs: answer one first.")


def _judgement_record(*, task: PairTask, rater, verdict: str, client_id: uuid.UUID, comment: str) -> Judgement:
    serialise_writers_on_sqlite(task.experiment_id)
    rater_and_task_lock(rater.pk, task.pk)  # the rater's first, as leases and undos take them
    state = submit_state(task_id=task.pk, rater=rater, client_id=client_id, now=timezone.now())
    if state["client_id_used"]:
        raise JudgementRefused("This client_id was used before.")  # a retry: the caller answers it
    if state["lease_expired"] is None:
        if state["judged"]:
            raise JudgementRefused("You already judged this pair.")
        raise JudgementRefused("This pair is not assigned to you.")
    if state["has_quota"]:
        quota_consume(rater=rater, task_id=task.pk)
    if one_statement_writes():
        judgement, refresh = verdict_store(
            task=task, rater=rater, verdict=verdict, client_id=client_id, comment=comment, now=timezone.now()
        )
        if refresh is not None:
            outbox_dispatch_on_commit(refresh)
        if not task.is_gold and state["lease_expired"]:
            _leases_beyond_wanted_revoke(task_id=task.pk, rater=rater)
        if settings.RATER_AUTO_PAUSE:
            outbox_add(kind=OutboxMessage.Kind.RATER_AUTO_PAUSE, target_id=rater.pk)
        return judgement
    # The same writes, one statement each (SQLite). A lease is deleted with the verdict it led
    # to, so the rater has not judged the task (the unique constraint would stop a second one).
    tasks = PairTask.objects.filter(pk=task.pk)
    if not task.is_gold:
        tasks = tasks.filter(verdicts__lt=F("wanted"))
    if not tasks.update(verdicts=F("verdicts") + 1):
        raise JudgementRefused("This pair already has all the verdicts it needs.")
    if not task.is_gold and state["lease_expired"]:
        _leases_beyond_wanted_revoke(task_id=task.pk, rater=rater)
    judgement = Judgement.objects.create(task=task, rater=rater, verdict=verdict, client_id=client_id, comment=comment)
    Lease.objects.filter(task=task, rater=rater).delete()
    if settings.RATER_AUTO_PAUSE:
        outbox_add(kind=OutboxMessage.Kind.RATER_AUTO_PAUSE, target_id=rater.pk)
    if not task.is_gold:
        outbox_add(kind=OutboxMessage.Kind.ESTIMATES_REFRESH, target_id=task.experiment_id)
    # Last: every verdict of the experiment updates these rows, whose locks are then held
    # only until the commit, not for the whole transaction.
    budget_consume(experiment_id=task.experiment_id, rater=rater, verdict=client_id)
    if not task.is_gold:
        experiment_progress_move(experiment_id=task.experiment_id, verdicts=1)
    return judgement


def _leases_beyond_wanted_revoke(*, task_id: int, rater) -> None:
    """A late verdict (its lease had expired and the pair went to someone else) is kept;
    if the task is now over-promised, the newest other leases on it are withdrawn: their
    holders have not answered yet, and their pages learn it on the next renewal."""
    task = PairTask.objects.get(pk=task_id)
    others = Lease.objects.filter(task_id=task_id, expires_at__gt=timezone.now()).exclude(rater=rater)
    excess = task.verdicts + others.count() - task.wanted
    if excess > 0:
        Lease.objects.filter(
            pk__in=list(others.order_by("-created_at", "-pk").values_list("pk", flat=True)[:excess])
        ).delete()


def _retry_of(*, client_id: uuid.UUID, task: PairTask, rater) -> Judgement | None:
    judgement = Judgement.objects.filter(client_id=client_id).first()
    if judgement is None:
        retracted = RetractedJudgement.objects.filter(client_id=client_id).first()
        if retracted is None:
            return None
        if retracted.task_id != task.pk or retracted.rater_id != rater.pk:
            raise ValidationError({"client_id": "Already used for another judgement."})
        if retracted.voided_by_id is not None:
            raise JudgementRefused("This verdict was voided by an admin.")
        raise JudgementRefused("This verdict was undone; answer the pair again.")
    if judgement.task_id != task.pk or judgement.rater_id != rater.pk:
        raise ValidationError({"client_id": "Already used for another judgement."})
    return judgement


def _uuid(value) -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        raise ValidationError({"client_id": "Must be a UUID."}) from None
