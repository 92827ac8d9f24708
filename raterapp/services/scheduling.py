"""Debounced background work: many requests in a burst share one task run.

The first request sets a pending key in the cache and schedules the task ``countdown``
seconds later; the ones that follow find the key and do nothing. The task deletes the
key before it reads anything, so a request that arrives while it runs schedules another.
"""

from __future__ import annotations

import math

from django.core.cache import cache

# Long enough to cover the countdown and a busy queue; if a task is lost the key expires
# and the next request schedules again.
PENDING_MARGIN_SECONDS = 60


def task_schedule_once(*, key: str, task, args: list, countdown: float) -> bool:
    """Schedule ``task(*args)`` in ``countdown`` seconds unless ``key`` is pending; whether this call did."""
    if not cache.add(key, 1, timeout=math.ceil(countdown + PENDING_MARGIN_SECONDS)):
        return False
    try:
        task.apply_async(args=args, countdown=countdown)
    except Exception:
        cache.delete(key)  # nothing is scheduled: let the next request try again
        raise
    return True


def task_pending_clear(key: str) -> None:
    """Called by the task as it starts: requests from now on schedule a new run."""
    cache.delete(key)
