"""How services start background work: the one module of raterapp/services that reaches
raterapp.tasks (tasks import services, never this), by the task's name in that module.

``task_enqueue`` runs a task as soon as a worker takes it. ``task_schedule_once`` debounces:
many requests in a burst share one task run. The first request sets a pending key in the
cache and schedules the task ``countdown`` seconds later; the ones that follow find the key
and do nothing. The task deletes the key before it reads anything, so a request that arrives
while it runs schedules another.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches

logger = logging.getLogger(__name__)

# Long enough to cover the countdown and a busy queue; if a task is lost the key expires
# and the next request schedules again.
PENDING_MARGIN_SECONDS = 60


def task_enqueue(task: str, *args) -> None:
    """Queue ``raterapp.tasks.<task>(*args)`` now."""
    _task(task).delay(*args)


def task_schedule_once(*, key: str, task: str, args: list, countdown: float) -> bool:
    """Schedule ``raterapp.tasks.<task>(*args)`` in ``countdown`` seconds unless ``key`` is
    pending; whether this call did."""
    if not debounce_cache().add(key, 1, timeout=math.ceil(countdown + PENDING_MARGIN_SECONDS)):
        return False
    try:
        _task(task).apply_async(args=args, countdown=countdown)
    except Exception:
        try:
            debounce_cache().delete(key)  # nothing is scheduled: let the next request try again
        except Exception as exc:  # Redis is away too: the key expires, the reconciler catches up meanwhile
            logger.warning("debounce key %s left to expire: %s", key, exc)
        raise
    return True


def task_pending_clear(key: str) -> None:
    """Called by the task as it starts: requests from now on schedule a new run. A cache that does
    not answer is no reason to fail the run: the key expires (``PENDING_MARGIN_SECONDS``)."""
    try:
        debounce_cache().delete(key)
    except Exception as exc:
        logger.warning("debounce key %s left to expire: %s", key, exc)


@dataclass(frozen=True)
class ExperimentRefresh:
    """A recompute of one experiment that a burst of requests shares: the task
    ``<name>_refresh_task``, its pending key ``<key>-pending:<id>``, and its countdown, the
    setting ``<NAME>_DEBOUNCE_SECONDS`` (read when scheduling, so tests may override it)."""

    name: str
    key: str

    def schedule(self, experiment_id: int) -> bool:
        """Schedule the recompute unless one is pending; whether this call did."""
        return task_schedule_once(
            key=self.pending_key(experiment_id),
            task=f"{self.name}_refresh_task",
            args=[experiment_id],
            countdown=getattr(settings, f"{self.name.upper()}_DEBOUNCE_SECONDS"),
        )

    def started(self, experiment_id: int) -> None:
        task_pending_clear(self.pending_key(experiment_id))

    def pending_key(self, experiment_id: int) -> str:
        return f"{self.key}-pending:{experiment_id}"


def debounce_cache():
    """The strict cache of the pending keys (settings.CACHES): its errors reach the outbox."""
    return caches["debounce"]


def _task(name: str):
    # Imported when called: raterapp.tasks imports the services, which import this module.
    from raterapp import tasks

    return getattr(tasks, name)
