"""Row locks, and their stand-in on SQLite."""

from __future__ import annotations

from django.db import connection
from django.db.models import F

from raterapp.models import Experiment, PairTask


def task_lock(task_id: int) -> PairTask | None:
    """The task row, locked until the transaction ends (SQLite: already serialised)."""
    return PairTask.objects.select_for_update().filter(pk=task_id).first()


def serialise_writers_on_sqlite(experiment_id: int) -> None:
    """SQLite has no row locks, and a transaction that read before its first write fails
    with "database is locked" when another wrote in between. A no-op write first takes the
    database's write lock for the whole transaction (what ``BEGIN IMMEDIATE`` does), so
    concurrent assignments and submits queue instead of failing."""
    if not connection.features.has_select_for_update:
        Experiment.objects.filter(pk=experiment_id).update(seed=F("seed"))
