"""How services start background work: the one module of raterapp/services that starts Celery
tasks. Each task is started by one function or ``ExperimentRefresh`` here, which names it by its
constant in :mod:`raterapp.task_names` (``grep -rn ESTIMATES_REFRESH raterapp`` finds the task,
its queue and who starts it). Tasks are found in Celery's registry by that name: the tasks import
services, which schedule tasks, so this module does not import them.

``experiment_prepare_enqueue`` and ``sample_batch_draw_enqueue`` run a task as soon as a worker
takes it. ``task_schedule_once`` debounces: many requests in a burst share one task run. The
first request sets a pending key in the cache and schedules the task ``countdown`` seconds
later; the ones that follow find the key and do nothing. The task deletes the key before it
reads anything, so a request that arrives while it runs schedules another.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from celery import Task, current_app
from django.conf import settings
from django.core.cache import caches

from raterapp import task_names

logger = logging.getLogger(__name__)

# Long enough to cover the countdown and a busy queue; if a task is lost the key expires
# and the next request schedules again.
PENDING_MARGIN_SECONDS = 60


def experiment_prepare_enqueue(experiment_id: int) -> None:
    """Queue the preparation of an experiment now."""
    task_named(task_names.EXPERIMENT_PREPARE).delay(experiment_id)


def sample_batch_draw_enqueue(batch_id: int) -> None:
    """Queue the draw of a requested batch now."""
    task_named(task_names.SAMPLE_BATCH_DRAW).delay(batch_id)


def task_named(name: str) -> Task:
    """The registered task of that name (``raterapp.tasks``, imported when the app is ready)."""
    return current_app.tasks[name]


def task_schedule_once(*, key: str, task: str, args: list, countdown: float) -> bool:
    """Schedule the task named ``task`` with ``args`` in ``countdown`` seconds unless ``key`` is pending; whether this
    call did."""
    if not debounce_cache().add(key, 1, timeout=math.ceil(countdown + PENDING_MARGIN_SECONDS)):
        return False
    try:
        task_named(task).apply_async(args=args, countdown=countdown)
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
    """A recompute of one experiment that a burst of requests shares: its task's name, its pending key
    ``<key>-pending:<id>``, and its countdown, the setting named ``countdown_setting`` (read when
    scheduling, so tests may override it). The task calls :meth:`started` first."""

    task: str
    key: str
    countdown_setting: str

    def schedule(self, experiment_id: int) -> bool:
        """Schedule the recompute unless one is pending; whether this call did."""
        return task_schedule_once(
            key=self.pending_key(experiment_id),
            task=self.task,
            args=[experiment_id],
            countdown=getattr(settings, self.countdown_setting),
        )

    def started(self, experiment_id: int) -> None:
        task_pending_clear(self.pending_key(experiment_id))

    def pending_key(self, experiment_id: int) -> str:
        return f"{self.key}-pending:{experiment_id}"


def debounce_cache():
    """The strict cache of the pending keys (settings.CACHES): its errors reach the outbox."""
    return caches["debounce"]


ESTIMATES_REFRESH = ExperimentRefresh(task_names.ESTIMATES_REFRESH, "estimates", "ESTIMATES_DEBOUNCE_SECONDS")
DERIVED_REFRESH = ExperimentRefresh(task_names.DERIVED_REFRESH, "derived", "DERIVED_DEBOUNCE_SECONDS")
RATER_AWARE_REFRESH = ExperimentRefresh(task_names.RATER_AWARE_REFRESH, "rater-aware", "RATER_AWARE_DEBOUNCE_SECONDS")
RATER_AGREEMENT_REFRESH = ExperimentRefresh(
    task_names.RATER_AGREEMENT_REFRESH, "rater-agreement", "RATER_AGREEMENT_DEBOUNCE_SECONDS"
)
# The agreement across all experiments: one run pending, whichever experiment's snapshot asked.
RATER_AGREEMENT_ALL_PENDING = "rater-agreement-all-pending"


def derived_refreshes_schedule(experiment_id: int) -> None:
    """Schedule the recomputes that follow a snapshot: ΔRecall and IQ, the rater-aware estimates,
    and the raters' agreement in the experiment and across all experiments."""
    DERIVED_REFRESH.schedule(experiment_id)
    RATER_AWARE_REFRESH.schedule(experiment_id)
    RATER_AGREEMENT_REFRESH.schedule(experiment_id)
    rater_agreement_all_schedule()


def rater_agreement_all_schedule() -> bool:
    """Schedule the raters' agreement across all experiments unless it is pending; whether this call did."""
    return task_schedule_once(
        key=RATER_AGREEMENT_ALL_PENDING,
        task=task_names.RATER_AGREEMENT_ALL_REFRESH,
        args=[],
        countdown=settings.RATER_AGREEMENT_DEBOUNCE_SECONDS,
    )


def rater_agreement_all_started() -> None:
    """Called by that run as it starts: snapshots from now on schedule another."""
    task_pending_clear(RATER_AGREEMENT_ALL_PENDING)


# A rater's quality is checked at most once a minute after their verdicts.
AUTO_PAUSE_INTERVAL_SECONDS = 60


def rater_auto_pause_schedule(rater_id: int) -> bool:
    """Schedule a check of the rater unless one is pending (or the automatic pause is off);
    whether this call scheduled it."""
    if not settings.RATER_AUTO_PAUSE:
        return False
    return task_schedule_once(
        key=_auto_pause_key(rater_id),
        task=task_names.RATERS_AUTO_PAUSE,
        args=[rater_id],
        countdown=AUTO_PAUSE_INTERVAL_SECONDS,
    )


def rater_auto_pause_started(rater_id: int) -> None:
    """Called by the check as it starts: verdicts from now on schedule a new one."""
    task_pending_clear(_auto_pause_key(rater_id))


def _auto_pause_key(rater_id: int) -> str:
    return f"rater-auto-pause-pending:{rater_id}"
