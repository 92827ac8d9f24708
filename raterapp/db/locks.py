"""Row locks, and their stand-in on SQLite."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import F

from raterapp.models import Experiment, PairTask


def task_lock(task_id: int) -> PairTask | None:
    """The task row, locked until the transaction ends (SQLite: already serialised).

    Ordered by pk: PairTask's default ordering goes through the experiment, and FOR UPDATE
    over that join would lock the experiment row too, serialising every write of the experiment.
    """
    return PairTask.objects.select_for_update().filter(pk=task_id).order_by("pk").first()


def serialise_writers_on_sqlite(experiment_id: int) -> None:
    """SQLite has no row locks, and a transaction that read before its first write fails
    with "database is locked" when another wrote in between. A no-op write first takes the
    database's write lock for the whole transaction (what ``BEGIN IMMEDIATE`` does), so
    concurrent assignments and submits queue instead of failing."""
    if not connection.features.has_select_for_update:
        Experiment.objects.filter(pk=experiment_id).update(seed=F("seed"))


def rater_lock(rater_id: int) -> None:
    """The rater's user row, locked until the transaction ends: a rater's lease requests
    (from any session or device) and the admin actions that pause, deactivate or set quotas
    of the rater take it first, so they run one after the other (SQLite: already serialised).

    ``FOR NO KEY UPDATE``, not ``FOR UPDATE``: storing a verdict or a lease of the rater
    takes ``FOR KEY SHARE`` on this row (its foreign key), which ``FOR UPDATE`` would block,
    and a submit holding its task's lock would deadlock with a lease request holding this one.
    """
    list(get_user_model().objects.select_for_update(no_key=True).filter(pk=rater_id).values_list("pk", flat=True))


def rater_and_task_lock(rater_id: int, task_id: int) -> None:
    """:func:`rater_lock` then :func:`task_lock` in one statement (the rater's row first, as the
    other writers take them). Reads nothing: what is read after it sees every commit before."""
    if not connection.features.has_select_for_update:
        return
    users, tasks = get_user_model()._meta.db_table, PairTask._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT 1 FROM "{users}" u, "{tasks}" t WHERE u.id = %s AND t.id = %s'
            " FOR NO KEY UPDATE OF u FOR UPDATE OF t",
            [rater_id, task_id],
        )
        cursor.fetchall()
