"""What a rater sees: two item cards (nothing that tells which clusters they are in), their progress and quota."""

from __future__ import annotations

import hashlib
from datetime import datetime, time
from typing import Any, TypeGuard

from django.conf import settings
from django.db import connection
from django.db.models import Count, Exists, F, Func, OuterRef, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from raterapp.access import task_in_rating_q
from raterapp.db.rows import table
from raterapp.models import (
    BudgetPool,
    Experiment,
    ExperimentBudget,
    ExperimentProgress,
    Item,
    Judgement,
    Lease,
    PairReport,
    PairTask,
    PairTaskQuerySet,
    RaterProfile,
    RaterVerdictCount,
)
from raterapp.vocabulary import QueueClosedReason

CARD_FIELDS = ("title", "description", "image_url", "url", "attributes")


def item_card_get(*, item: Item) -> dict:
    """The item as a rater sees it: no item id, no cluster ids, no weight (blind judging)."""
    return {field: getattr(item, field) for field in CARD_FIELDS}


def task_cards_get(*, task: PairTask, rater) -> tuple[dict, dict]:
    """The task's two cards as ``(left, right)``.

    The side is random per pair and rater (a keyed hash of both ids), so it differs between
    raters and from the stored order, and stays put when the rater reloads or undoes.
    """
    a, b = item_card_get(item=task.item_a), item_card_get(item=task.item_b)
    return (a, b) if _side_bit(task.pk, rater.pk) else (b, a)


def _side_bit(task_id: int, rater_id: int) -> int:
    key = hashlib.sha256(settings.SECRET_KEY.encode()).digest()
    return hashlib.blake2b(f"{task_id}:{rater_id}".encode(), key=key, digest_size=1).digest()[0] & 1


_UNREAD: Any = object()


def rater_quota_left(
    *, rater, besides_task_id: int | None = None, profile: RaterProfile | None = _UNREAD
) -> tuple[int | None, int | None]:
    """Verdicts the rater may still give today and in all (``None``: no quota). Pairs they
    hold under a live lease count as given, so a preloaded pair never exceeds a quota;
    ``besides_task_id`` leaves out the lease on that task (the one being answered). ``profile``:
    the rater's profile (or ``None``) when the caller read it already."""
    if profile is _UNREAD:
        profile = RaterProfile.objects.filter(user=rater).first()
    if not _has_quota(profile):
        return None, None
    return _quota_left(profile, _rater_counts(rater=rater), rater=rater, besides_task_id=besides_task_id)


def rater_progress_get(*, experiment: Experiment, rater, session_start: datetime | None = None) -> dict:
    """The rater's progress: this session and today, in the experiment, what the experiment
    still wants (gold pairs and excluded pairs aside) and their quota. One query (two for an
    experiment without its ``ExperimentProgress`` row), written out: the loop asks for it with
    every pair and verdict, and the ORM took longer to build it than PostgreSQL to run it."""
    with connection.cursor() as cursor:
        cursor.execute(_PROGRESS, _counts_params(rater=rater, experiment=experiment, session_start=session_start))
        daily, total, judged, today, mine, session, held, remaining = cursor.fetchone()
    if remaining is None:
        remaining = experiment_verdicts_left(experiment_id=experiment.pk)
    return {
        "session": session if session_start is not None else None,
        "today": today,
        "mine": mine,
        "remaining": remaining,
        "quota": {
            "daily": daily,
            "daily_left": None if daily is None else max(daily - today - held, 0),
            "total": total,
            "total_left": None if total is None else max(total - judged - held, 0),
        },
    }


# The rater's verdicts in all, today, in the experiment and in it since the session started: the
# counts of every experiment and of this one are rows (RaterVerdictCount); today's and the
# session's verdicts are ranges of the (rater, created_at) index. No request counts a rater's
# whole history (32 ms at 100,000 verdicts: bench/bench_rater_history.py).
_COUNTS = f"""
    (SELECT COALESCE(SUM(c.verdicts), 0) FROM {table(RaterVerdictCount)} c WHERE c.rater_id = %(rater)s),
    (SELECT count(*) FROM {table(Judgement)} j WHERE j.rater_id = %(rater)s AND j.created_at >= %(today)s),
    COALESCE((SELECT c.verdicts FROM {table(RaterVerdictCount)} c
        WHERE c.rater_id = %(rater)s AND c.experiment_id = %(experiment)s), 0),
    (SELECT count(*) FROM {table(Judgement)} j JOIN {table(PairTask)} t ON t.id = j.task_id
        WHERE j.rater_id = %(rater)s AND j.created_at >= %(since)s AND t.experiment_id = %(experiment)s)"""
_COUNT_FIELDS = ("total", "today", "mine", "session")

_PROGRESS = f"""
SELECT p.daily_quota, p.total_quota, {_COUNTS},
    (SELECT count(*) FROM {table(Lease)} l WHERE l.rater_id = %(rater)s AND l.expires_at > %(now)s),
    (SELECT g.verdicts_left FROM {table(ExperimentProgress)} g WHERE g.experiment_id = %(experiment)s)
FROM (SELECT 1) one LEFT JOIN {table(RaterProfile)} p ON p.user_id = %(rater)s
"""


def rows_count(rows: QuerySet) -> Coalesce:
    """``rows`` counted in a subquery (no GROUP BY: one row, 0 when there are none)."""
    return Coalesce(Subquery(rows.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n")), 0)


def experiment_verdicts_left(*, experiment_id: int) -> int:
    """Verdicts the experiment's sampled pairs still want: its ``ExperimentProgress`` row, or
    the sum over its tasks where it has none."""
    left = ExperimentProgress.objects.filter(experiment_id=experiment_id).values_list("verdicts_left", flat=True)
    for value in left:
        return value
    return PairTask.objects.filter(task_in_rating_q(), experiment_id=experiment_id).aggregate(
        left=Coalesce(Sum("wanted"), 0) - Coalesce(Sum("verdicts"), 0)
    )["left"]


def _rater_counts(*, rater, experiment: Experiment | None = None, session_start: datetime | None = None) -> dict:
    """The rater's verdicts in all, today, in the experiment and in it since ``session_start``: one query."""
    params = _counts_params(rater=rater, experiment=experiment, session_start=session_start)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_COUNTS}", params)
        return dict(zip(_COUNT_FIELDS, cursor.fetchone(), strict=True))


def _counts_params(*, rater, experiment: Experiment | None, session_start: datetime | None) -> dict:
    now = timezone.now()
    at = connection.ops.adapt_datetimefield_value
    return {
        "rater": rater.pk,
        "experiment": experiment.pk if experiment is not None else None,
        "today": at(today_start()),
        "since": at(session_start or now),
        "now": at(now),
    }


def _has_quota(profile: RaterProfile | None) -> TypeGuard[RaterProfile]:
    return profile is not None and (profile.daily_quota is not None or profile.total_quota is not None)


def _quota_left(
    profile: RaterProfile, counts: dict, *, rater, besides_task_id: int | None = None
) -> tuple[int | None, int | None]:
    held = Lease.objects.filter(rater=rater, expires_at__gt=timezone.now()).exclude(task_id=besides_task_id).count()
    daily_left = None if profile.daily_quota is None else max(profile.daily_quota - counts["today"] - held, 0)
    total_left = None if profile.total_quota is None else max(profile.total_quota - counts["total"] - held, 0)
    return daily_left, total_left


def today_start() -> datetime:
    return timezone.make_aware(datetime.combine(timezone.localdate(), time.min))


def tasks_open_to_rater(rater) -> PairTaskQuerySet:
    """Tasks the rater has neither judged nor reported."""
    return PairTask.objects.exclude(Exists(Judgement.objects.filter(task=OuterRef("pk"), rater=rater))).exclude(
        Exists(PairReport.objects.filter(task=OuterRef("pk"), rater=rater))
    )


def task_queue_for_rater(*, experiment: Experiment, rater, now) -> QuerySet[PairTask]:
    """Sampled tasks open to this rater, not held by them, that others' live leases do not
    fill, in rank order: what the rater's next lease takes from."""
    held = (
        Lease.objects.filter(task=OuterRef("pk"), expires_at__gt=now)
        .exclude(rater=rater)
        .order_by()
        .values("task")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        tasks_open_to_rater(rater)
        .filter(task_in_rating_q(), experiment=experiment, verdicts__lt=F("wanted"))
        .exclude(Exists(Lease.objects.filter(task=OuterRef("pk"), rater=rater, expires_at__gt=now)))
        .alias(held=Coalesce(Subquery(held), Value(0)))
        .filter(verdicts__lt=F("wanted") - F("held"))
        .order_by("rank")
    )


def budget_closed_reason(*, budget: ExperimentBudget | None, pool: BudgetPool | None) -> tuple[str, str] | None:
    """Why the experiment's budget (or its pool) leases no more pairs, as ``(reason, message)``
    (``budget_paused`` or ``budget_spent``: its verdicts and live leases use it up), or
    ``None``. The lease service calls it with both rows locked."""
    if budget is None:
        return None
    if budget.paused:
        return QueueClosedReason.BUDGET_PAUSED, "Rating of this experiment is paused."
    now = timezone.now()
    if budget.max_verdicts is not None:
        held = Lease.objects.filter(task__experiment=budget.experiment_id, expires_at__gt=now).count()
        if budget.spent + held >= budget.max_verdicts:
            return QueueClosedReason.BUDGET_SPENT, "The judgement budget of this experiment is spent."
    if pool is not None:
        if pool.paused:
            return QueueClosedReason.BUDGET_PAUSED, "Rating of this experiment is paused."
        held = Lease.objects.filter(task__experiment__budget__pool=pool, expires_at__gt=now).count()
        if pool.spent + held >= pool.max_verdicts:
            return QueueClosedReason.BUDGET_SPENT, "The shared judgement budget is spent."
    return None
