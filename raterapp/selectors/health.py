"""The health of the service's dependencies: database, Redis (when configured) and workers."""

from __future__ import annotations

import time

from django.conf import settings
from django.db import connection


def health_get(*, worker_timeout: float = 1.0) -> dict:
    """Status of each dependency; ``ok`` is true when every configured one answers."""
    checks = {"database": _database(), "redis": _redis(), "worker": _workers(worker_timeout)}
    return {"ok": all(c["status"] in ("ok", "not configured") for c in checks.values()), **checks}


def health_brief_get() -> dict:
    """The database and Redis, as statuses only (no errors, versions or host names): what an
    anonymous caller may learn, at the cost of two round trips to local services."""
    checks = {"database": _database(), "redis": _redis()}
    return {
        "ok": all(c["status"] in ("ok", "not configured") for c in checks.values()),
        **{name: {"status": c["status"]} for name, c in checks.items()},
    }


def _database() -> dict:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"status": "ok", "vendor": connection.vendor, "ms": _ms(started)}
    except Exception as exc:  # noqa: BLE001 - the report is the point
        return {"status": "error", "error": str(exc)}


def _redis() -> dict:
    if not settings.REDIS_URL:
        return {"status": "not configured"}
    import redis

    started = time.perf_counter()
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1).ping()
        return {"status": "ok", "ms": _ms(started)}
    except Exception as exc:  # noqa: BLE001
        return {"status": "error", "error": str(exc)}


def _workers(timeout: float) -> dict:
    from raterapp.celery import app

    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"status": "ok", "mode": "eager (in-process)"}
    try:
        replies = app.control.ping(timeout=timeout) or []
    except Exception as exc:  # noqa: BLE001
        return {"status": "error", "error": str(exc)}
    if not replies:
        return {"status": "error", "error": "no worker answered"}
    return {"status": "ok", "workers": sorted(name for reply in replies for name in reply)}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
