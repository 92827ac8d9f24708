"""The web server's worker class: gunicorn's uvicorn worker (docker-compose.yml, Dockerfile) with
two changes.

- No uvicorn ``server`` header, which tells anyone what serves the app and nothing they need.
- A watchdog on the worker's database pool. A connection that is never given back (a request
  that died between taking it and returning it; issue 33's failed live streams) is lost to the
  pool for the life of the process; once all of them are, every request waits for one and
  answers 500, and nothing recovers by itself: the worker still answers gunicorn's heartbeat,
  so gunicorn sees nothing wrong. The watchdog samples the pool's stats every few seconds; once
  the pool has been exhausted (every connection it may open handed out, none available,
  requests waiting) for ``WEB_POOL_STARVED_SECONDS`` on end, it logs the cause and ends the
  worker, and gunicorn starts a fresh one with a fresh pool. A pool that is short because the
  database is down is not exhausted in this sense (its connections fail and are dropped, so it
  has fewer than its maximum): restarting would not help, and it does not happen.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence

from uvicorn_worker import UvicornWorker as _UvicornWorker

Stats = Mapping[str, int]  # psycopg_pool's ConnectionPool.get_stats()
SAMPLE_SECONDS = 2.0

_watchdog: PoolWatchdog | None = None  # this process's, under gunicorn


def pool_exhausted(stats: Stats) -> bool:
    """Every connection the pool may open is open and handed out, and requests wait for one."""
    return (
        stats.get("requests_waiting", 0) > 0
        and stats.get("pool_available", 0) == 0
        and stats.get("pool_size", 0) >= stats.get("pool_max", 1)
    )


def pool_starved_seconds(samples: Sequence[tuple[float, Stats]]) -> float:
    """How long the pool has been exhausted, from samples ``(time, stats)`` in time order: from
    the first of the last unbroken run of exhausted samples to the last sample; 0 when the last
    one is not exhausted."""
    since = None
    for at, stats in samples:
        since = (at if since is None else since) if pool_exhausted(stats) else None
    return samples[-1][0] - since if since is not None else 0.0


def pool_restart_due(samples: Sequence[tuple[float, Stats]], *, starved_seconds: float) -> bool:
    """Whether the worker should end: its pool exhausted for ``starved_seconds`` on end."""
    return starved_seconds > 0 and bool(samples) and pool_starved_seconds(samples) >= starved_seconds


def pool_starved_now() -> float:
    """Seconds this process's pool has been exhausted at the watchdog's last sample (0 without
    one): the liveness route (raterapp/asgi.py) fails from the moment the watchdog gives up."""
    return _watchdog.starved if _watchdog is not None else 0.0


class PoolWatchdog(threading.Thread):
    """Samples ``pool_stats()`` every ``every`` seconds and calls ``on_starved(seconds, stats)``
    once the pool has been exhausted for ``starved_seconds``; then stops."""

    def __init__(
        self,
        *,
        pool_stats: Callable[[], Stats | None],
        starved_seconds: float,
        on_starved: Callable[[float, Stats], None],
        every: float = SAMPLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ):
        super().__init__(name="pool-watchdog", daemon=True)
        self.pool_stats, self.starved_seconds, self.on_starved = pool_stats, starved_seconds, on_starved
        self.every, self.clock = every, clock
        self.samples: deque[tuple[float, Stats]] = deque(maxlen=int(starved_seconds / every) + 3)
        self.starved = 0.0

    def run(self) -> None:
        while True:
            time.sleep(self.every)
            stats = self.pool_stats()
            if stats is None:
                continue
            self.samples.append((self.clock(), stats))
            self.starved = pool_starved_seconds(self.samples)
            if pool_restart_due(self.samples, starved_seconds=self.starved_seconds):
                self.on_starved(self.starved, stats)
                return


def _django_pool_stats() -> Stats | None:
    from django.db import connections

    pool = getattr(connections["default"], "pool", None)  # the process's pool, whichever thread asks
    return pool.get_stats() if pool is not None else None


class UvicornWorker(_UvicornWorker):
    CONFIG_KWARGS = {**_UvicornWorker.CONFIG_KWARGS, "server_header": False}

    def run(self) -> None:
        global _watchdog
        from django.conf import settings  # configured: gunicorn loaded the app before run()

        pooled = bool(settings.DATABASES["default"].get("OPTIONS", {}).get("pool"))
        if pooled and settings.WEB_POOL_STARVED_SECONDS > 0:
            _watchdog = PoolWatchdog(
                pool_stats=_django_pool_stats,
                starved_seconds=settings.WEB_POOL_STARVED_SECONDS,
                on_starved=self._pool_starved,
            )
            _watchdog.start()
        super().run()

    def _pool_starved(self, seconds: float, stats: Stats) -> None:
        """Log the cause and end this worker: gracefully first (uvicorn's SIGTERM handler stops
        accepting and lets requests that can finish finish), then, as the arbiter would after its
        graceful timeout, at once. Any exit code but gunicorn's boot and load errors (3, 4, which
        stop the whole server) has the arbiter start a new worker."""
        pid, grace = os.getpid(), self.cfg.graceful_timeout
        self.log.error(
            "Worker %s: database pool exhausted for %.0f s (WEB_POOL_STARVED_SECONDS): all %s connections "
            "handed out and none given back while %s requests waited (held by requests that ended "
            "without returning them, or stuck on a lock). Restarting the worker.",
            pid, seconds, stats.get("pool_size"), stats.get("requests_waiting"),
        )  # fmt: skip
        os.kill(pid, signal.SIGTERM)
        time.sleep(grace)
        self.log.error("Worker %s: still running %s s after SIGTERM; exiting now.", pid, grace)
        os._exit(1)
