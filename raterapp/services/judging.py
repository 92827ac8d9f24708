"""Handing pairs to raters and recording their verdicts.

A task (an unordered pair) wants ``wanted`` verdicts from distinct raters. A rater works
on one task at a time under a *lease* that expires after ``settings.LEASE_SECONDS``
unless renewed; a task is offered only while ``verdicts + other raters' live leases <
wanted``, so every live lease is a promise that its holder's verdict will be counted.

The rules that must hold under concurrency live in the database: one verdict per rater
and task (unique constraint), one judgement per ``client_id`` (unique), ``verdicts <=
wanted`` (check constraint) and the increment itself is a conditional update. Leasing
locks the task row first (``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL) and only
then counts the leases, in a fresh statement that sees every committed lease.

A late verdict (its lease expired) is kept when the task still has a free slot once the
other raters' live leases are reserved; otherwise it is refused and nothing is written.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from raterapp.access import RATER, has_role
from raterapp.models import Experiment, Judgement, Lease, PairTask

from .estimates import estimates_refresh_schedule


class JudgementRefused(Exception):
    """The verdict cannot be recorded; the message says why. Nothing was written."""


def assignment_next(*, experiment: Experiment, rater) -> PairTask | None:
    """The task this rater should judge next, leased to them; ``None`` when none is left.

    A rater who still holds a live lease in the experiment gets that task again, with the
    lease renewed. Otherwise the first task in rank order that still wants verdicts, that
    this rater has not judged, and that other raters' live leases do not fill. The
    returned task carries its ``lease``.
    """
    with transaction.atomic():
        _serialise_writers_on_sqlite(experiment.pk)
        task = _lease_renew(experiment=experiment, rater=rater)
        return task if task is not None else _lease_take(experiment=experiment, rater=rater)


def judgement_submit(*, task: PairTask, rater, verdict: str, client_id, comment: str = "") -> tuple[Judgement, bool]:
    """Record a rater's verdict on a task; ``(judgement, created)``.

    Idempotent by ``client_id``: a retry returns the stored judgement with
    ``created=False``; a ``client_id`` already used for another task or rater is a
    ``ValidationError``. Raises :class:`JudgementRefused` when the rater already judged
    the task, never held a lease on it, or the task has no free slot left. On commit, a
    (debounced) recompute of the estimates is scheduled.
    """
    if verdict not in Judgement.Verdict.values:
        raise ValidationError({"verdict": f"Must be one of {', '.join(Judgement.Verdict.values)}."})
    client_id = _uuid(client_id)
    if not has_role(rater, RATER):
        raise PermissionDenied("Only raters submit verdicts.")
    retried = _retry_of(client_id=client_id, task=task, rater=rater)
    if retried is not None:
        return retried, False
    try:
        with transaction.atomic():
            judgement = _judgement_record(task=task, rater=rater, verdict=verdict, client_id=client_id, comment=comment)
    except (IntegrityError, JudgementRefused) as exc:
        # The original of this retry may have committed while we waited for the task's lock.
        retried = _retry_of(client_id=client_id, task=task, rater=rater)
        if retried is not None:
            return retried, False
        if isinstance(exc, IntegrityError):
            raise JudgementRefused("You already judged this pair.") from None
        raise
    return judgement, True


# ---------------------------------------------------------------------------- leasing


def _lease_renew(*, experiment: Experiment, rater) -> PairTask | None:
    lease = (
        Lease.objects.filter(rater=rater, task__experiment=experiment, expires_at__gt=timezone.now())
        .order_by("-expires_at")
        .first()
    )
    if lease is None:
        return None
    task = _task_lock(lease.task_id)
    now = timezone.now()
    if not _slot_free(task, rater=rater, now=now):
        Lease.objects.filter(pk=lease.pk).delete()
        return None
    expires_at = now + timedelta(seconds=settings.LEASE_SECONDS)
    if not Lease.objects.filter(pk=lease.pk, expires_at__gt=now).update(expires_at=expires_at):
        return None  # it expired meanwhile: the rater queues like everyone else
    lease.expires_at = expires_at
    task.lease = lease
    return task


def _lease_take(*, experiment: Experiment, rater) -> PairTask | None:
    queue = _task_queue(experiment=experiment, rater=rater, now=timezone.now())
    last_rank = -1
    while True:
        candidates = queue.filter(rank__gt=last_rank)
        if connection.features.has_select_for_update_skip_locked:
            candidates = candidates.select_for_update(skip_locked=True)
        task = candidates.first()
        if task is None:
            return None
        last_rank = task.rank
        now = timezone.now()
        if _slot_free(task, rater=rater, now=now):
            task.lease, _ = Lease.objects.update_or_create(
                task=task,
                rater=rater,
                defaults={"expires_at": now + timedelta(seconds=settings.LEASE_SECONDS), "token": uuid.uuid4()},
            )
            return task


def _task_queue(*, experiment: Experiment, rater, now) -> QuerySet[PairTask]:
    """Open tasks this rater has not judged and others' live leases do not fill, in rank order."""
    held = (
        Lease.objects.filter(task=OuterRef("pk"), expires_at__gt=now)
        .exclude(rater=rater)
        .order_by()
        .values("task")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        PairTask.objects.filter(experiment=experiment, verdicts__lt=F("wanted"))
        .exclude(Exists(Judgement.objects.filter(task=OuterRef("pk"), rater=rater)))
        .alias(held=Coalesce(Subquery(held), Value(0)))
        .filter(verdicts__lt=F("wanted") - F("held"))
        .order_by("rank")
    )


def _slot_free(task: PairTask, *, rater, now) -> bool:
    """Whether this rater may hold the task: checked with the task row locked, in fresh
    statements that see every committed lease and verdict."""
    if Judgement.objects.filter(task=task, rater=rater).exists():
        return False
    held = Lease.objects.filter(task=task, expires_at__gt=now).exclude(rater=rater).count()
    return task.verdicts + held < task.wanted


# ---------------------------------------------------------------------------- verdicts


def _judgement_record(*, task: PairTask, rater, verdict: str, client_id: uuid.UUID, comment: str) -> Judgement:
    _serialise_writers_on_sqlite(task.experiment_id)
    _task_lock(task.pk)
    if Judgement.objects.filter(task=task, rater=rater).exists():
        raise JudgementRefused("You already judged this pair.")
    lease = Lease.objects.filter(task=task, rater=rater).first()
    if lease is None:
        raise JudgementRefused("This pair is not assigned to you.")
    now = timezone.now()
    reserved = 0
    if lease.expires_at <= now:
        reserved = Lease.objects.filter(task=task, expires_at__gt=now).exclude(rater=rater).count()
    counted = PairTask.objects.filter(pk=task.pk, verdicts__lt=F("wanted") - reserved).update(
        verdicts=F("verdicts") + 1
    )
    if not counted:
        raise JudgementRefused("This pair already has all the verdicts it needs.")
    judgement = Judgement.objects.create(task=task, rater=rater, verdict=verdict, client_id=client_id, comment=comment)
    lease.delete()
    transaction.on_commit(partial(estimates_refresh_schedule, experiment_id=task.experiment_id), robust=True)
    return judgement


def _retry_of(*, client_id: uuid.UUID, task: PairTask, rater) -> Judgement | None:
    judgement = Judgement.objects.filter(client_id=client_id).first()
    if judgement is None:
        return None
    if judgement.task_id != task.pk or judgement.rater_id != rater.pk:
        raise ValidationError({"client_id": "Already used for another judgement."})
    return judgement


def _uuid(value) -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        raise ValidationError({"client_id": "Must be a UUID."}) from None


# ---------------------------------------------------------------------------- locks


def _task_lock(task_id: int) -> PairTask | None:
    """The task row, locked until the transaction ends (SQLite: already serialised)."""
    return PairTask.objects.select_for_update().filter(pk=task_id).first()


def _serialise_writers_on_sqlite(experiment_id: int) -> None:
    """SQLite has no row locks, and a transaction that read before its first write fails
    with "database is locked" when another wrote in between. A no-op write first takes the
    database's write lock for the whole transaction (what ``BEGIN IMMEDIATE`` does), so
    concurrent assignments and submits queue instead of failing."""
    if not connection.features.has_select_for_update:
        Experiment.objects.filter(pk=experiment_id).update(seed=F("seed"))
