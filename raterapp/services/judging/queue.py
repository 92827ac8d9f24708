"""Leases: which pair a rater judges next, and keeping it while they are on it."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from datetime import timedelta
from typing import cast

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from raterapp.access import open_to_rater, open_to_rater_q
from raterapp.db.locks import rater_lock, serialise_writers_on_sqlite, task_lock
from raterapp.models import Experiment, Judgement, Lease, PairTask
from raterapp.selectors.judging import rater_quota_left, rows_count, task_queue_for_rater, tasks_open_to_rater
from raterapp.vocabulary import QueueClosedReason

from .errors import JudgementRefused, QueueClosed
from .spending import budget_lease_check
from .store import lease_take, one_statement_writes, queue_next, rater_state

MAX_HELD = 2  # the pair on screen and the preloaded next one
MAX_RENEW = 10


def assignment_next(
    *, experiment: Experiment, rater, holding: Collection[int] = (), rng: np.random.Generator | None = None
) -> PairTask | None:
    """The task this rater should judge next, leased to them; ``None`` when none is left.

    ``holding`` lists the tasks the rater's page already shows or preloaded. A live lease
    the rater holds on another task of the experiment is renewed and returned (a reload
    finds its pair again). Otherwise a new task: a gold one at the experiment's
    ``gold_rate`` while gold tasks are left for this rater, else the first task in rank
    order that still wants verdicts, that this rater has neither judged nor reported, and
    that other raters' live leases do not fill. The returned task carries its ``lease``.
    ``rng`` draws whether to serve a gold task (a fresh generator when not given).

    Raises :class:`QueueClosed` when the rater is paused (``rater_paused``), the
    experiment was assigned to other raters meanwhile (``not_assigned``), the rater's quota
    or the experiment's budget is spent (or the budget paused), and
    :class:`JudgementRefused` when they already hold ``MAX_HELD`` tasks.

    The rater's row is locked first, so the requests of one rater (any session, any
    device) are served one at a time and a quota counts them all.
    """
    holding = set(holding)
    with transaction.atomic():
        serialise_writers_on_sqlite(experiment.pk)
        rater_lock(rater.pk)
        state = rater_state(experiment_id=experiment.pk, rater=rater, now=timezone.now())  # under the lock
        _rater_check(state)
        if state["holds"]:
            held = list(
                Lease.objects.filter(rater=rater, task__experiment=experiment, expires_at__gt=timezone.now()).order_by(
                    "created_at", "pk"
                )
            )
            for lease in held:
                if lease.task_id not in holding:
                    task = _lease_renew(lease, rater=rater)
                    if task is not None:
                        return task
            if len([lease for lease in held if lease.task_id in holding]) >= MAX_HELD:
                raise JudgementRefused(f"You already hold {MAX_HELD} pairs: judge one first.")
        if state["has_quota"]:
            _quota_check(rater)
        if state["budget_limited"]:
            budget_lease_check(experiment=experiment)
        if experiment.gold_rate > 0 and (rng or np.random.default_rng()).random() < experiment.gold_rate:
            task = _lease_take(_candidates(_gold_queue(experiment=experiment, rater=rater)), rater=rater)
            if task is not None:
                return task
        return _lease_take(_sampled_candidates(experiment, rater=rater), rater=rater)


def leases_renew(*, rater, task_ids: Iterable[int]) -> tuple[list[Lease], list[int]]:
    """Extend the rater's leases on these tasks; ``(renewed leases, lost task ids)``.

    A lease that expired meanwhile is renewed when its slot is still free; it is lost
    (and deleted) when other raters' leases and verdicts filled the task, when the
    rater judged the task already, or when the experiment is assigned to other raters (a
    lease granted while an admin changed the assignment ends here).
    """
    renewed, lost = [], []
    for task_id in list(dict.fromkeys(task_ids))[:MAX_RENEW]:
        lease = Lease.objects.filter(task_id=task_id, rater=rater).select_related("task").first()
        if lease is not None and _assigned_to_others(experiment_id=lease.task.experiment_id, rater=rater):
            Lease.objects.filter(pk=lease.pk).delete()
            lease = None
        if lease is None:
            lost.append(task_id)
            continue
        with transaction.atomic():
            serialise_writers_on_sqlite(lease.task.experiment_id)
            task = _lease_renew(lease, rater=rater)
        if task is None:
            lost.append(task_id)
        else:
            renewed.append(cast(Lease, task.lease))
    return renewed, lost


def _lease_renew(lease: Lease, *, rater) -> PairTask | None:
    """Renew a lease of the rater (in a transaction); the task with its ``lease``, or
    ``None`` (and the lease deleted) when its slot is gone."""
    task = task_lock(lease.task_id)
    now = timezone.now()
    if task is None or not _slot_free(task, rater=rater, now=now):
        Lease.objects.filter(pk=lease.pk).delete()
        return None
    expires_at = now + timedelta(seconds=settings.LEASE_SECONDS)
    if not Lease.objects.filter(pk=lease.pk).update(expires_at=expires_at):
        return None
    lease.expires_at = expires_at
    task.lease = lease
    return task


def _lease_take(next_task: Callable[[int | None], PairTask | None], *, rater) -> PairTask | None:
    """Lease the first task that ``next_task`` (the queue after a rank, locked) offers whose slot is
    still free once its row is locked."""
    last_rank = None
    while True:
        task = next_task(last_rank)
        if task is None:
            return None
        now = timezone.now()
        if one_statement_writes():
            task.lease = lease_take(task=task, rater=rater, now=now)
            if task.lease is not None:
                return task
        elif _slot_free(task, rater=rater, now=now):
            # An expired lease of the rater's on the task is taken over.
            lease = Lease(task=task, rater=rater, expires_at=now + timedelta(seconds=settings.LEASE_SECONDS))
            Lease.objects.bulk_create(
                [lease], update_conflicts=True, unique_fields=["task", "rater"], update_fields=LEASE_RENEWED
            )
            task.lease = lease
            return task
        if task.is_gold:
            return None  # another request of this rater took it meanwhile; gold is optional
        last_rank = task.rank


def _candidates(queue: QuerySet[PairTask]) -> Callable[[int | None], PairTask | None]:
    """The first task of ``queue`` after a rank, with its cards, locked (skipping locked ones)."""

    def next_task(last_rank: int | None) -> PairTask | None:
        candidates = queue if last_rank is None else queue.filter(rank__gt=last_rank)
        candidates = candidates.select_related("item_a", "item_b")  # the cards, in the same query
        if connection.features.has_select_for_update_skip_locked:
            candidates = candidates.select_for_update(skip_locked=True, of=("self",))
        return candidates.first()

    return next_task


def _sampled_candidates(experiment: Experiment, *, rater) -> Callable[[int | None], PairTask | None]:
    """The rater's queue (``task_queue_for_rater``), written out on PostgreSQL."""
    now = timezone.now()
    if one_statement_writes():
        return lambda last_rank: queue_next(experiment_id=experiment.pk, rater=rater, now=now, after=last_rank)
    return _candidates(task_queue_for_rater(experiment=experiment, rater=rater, now=now))


LEASE_RENEWED = ["expires_at", "created_at", "token"]


def _gold_queue(*, experiment: Experiment, rater) -> QuerySet[PairTask]:
    """Gold tasks open to this rater and not leased to them already, in random order."""
    return (
        tasks_open_to_rater(rater)
        .filter(experiment=experiment, retired_at__isnull=True)
        .gold()
        .exclude(Exists(Lease.objects.filter(task=OuterRef("pk"), rater=rater)))
        .order_by("?")
    )


def _slot_free(task: PairTask, *, rater, now) -> bool:
    """Whether this rater may hold the task: checked with the task row locked, in a fresh
    statement that sees every committed lease and verdict."""
    row = (
        PairTask.objects.filter(pk=task.pk)
        .order_by()
        .values(
            judged=Exists(Judgement.objects.filter(task=OuterRef("pk"), rater=rater)),
            held=rows_count(Lease.objects.filter(task=OuterRef("pk"), expires_at__gt=now).exclude(rater=rater)),
        )
        .get()
    )
    if row["judged"]:
        return False
    return task.is_gold or task.verdicts + row["held"] < task.wanted


def _rater_check(state: dict) -> None:
    """Refuse a paused rater (read under the rater's lock, which a pause takes too), and
    one the experiment is no longer open to (its assigned raters changed after the
    request's access check)."""
    if state["paused"]:
        raise QueueClosed(QueueClosedReason.RATER_PAUSED, "An admin paused your rating for now.")
    if not open_to_rater(
        open_to_all=state["open_to_all"], any_assigned=state["any_assigned"], assigned_to_rater=state["mine"]
    ):
        raise QueueClosed(QueueClosedReason.NOT_ASSIGNED, "This experiment is not open to you any more.")


def _assigned_to_others(*, experiment_id: int, rater) -> bool:
    """Whether the experiment is not open to this rater (:func:`raterapp.access.open_to_rater`)."""
    return not Experiment.objects.filter(open_to_rater_q(rater.pk), pk=experiment_id).exists()


def _quota_check(rater) -> None:
    daily_left, total_left = rater_quota_left(rater=rater)
    if daily_left is not None and daily_left <= 0:
        raise QueueClosed(QueueClosedReason.QUOTA_DAILY, "You reached your daily quota of verdicts.")
    if total_left is not None and total_left <= 0:
        raise QueueClosed(QueueClosedReason.QUOTA_TOTAL, "You reached your quota of verdicts.")
