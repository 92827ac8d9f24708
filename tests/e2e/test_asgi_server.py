"""The production web server (gunicorn with one uvicorn worker) with many dashboards' streams open:
the sync views still answer at once (each request runs in a thread of its own), the streams hold
no database connection between events (the pool stays within its bound), and the streams of an
experiment share one Redis subscription, given up when the last browser leaves."""

from __future__ import annotations

import threading
import time
import urllib.request

import pytest
import redis
from django.conf import settings
from django.db import connection

from raterapp.services.accounts.api_tokens import api_token_create
from raterapp.services.refresh.live import experiment_channel
from tests.browser.asgi_server import asgi_server_started
from tests.e2e.conftest import wait_for
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not settings.REDIS_URL or not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"),
        reason="the ASGI server's streams and pool need Redis and PostgreSQL",
    ),
]
STREAMS = 30


def _get(url: str, token: str, accept: str = "application/json"):
    request = urllib.request.Request(url, headers={"Authorization": f"Token {token}", "Accept": accept})
    return urllib.request.urlopen(request, timeout=10)


def _server_connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_open_streams_neither_starve_sync_views_nor_hold_connections(transactional_db, tmp_path):
    engineer = UserFactory(roles=["engineer"])
    experiment = experiment_prepared(owner=engineer)
    token = api_token_create(actor=engineer)[1]
    # One engineer with 30 pages open: past the default cap per user (EVENTS_STREAMS_PER_USER).
    with asgi_server_started(tmp_path, workers=1, environment={"EVENTS_STREAMS_PER_USER": str(STREAMS)}) as url:
        events = f"{url}/api/experiments/{experiment.pk}/events/"
        channel = experiment_channel(experiment.pk)
        opened, stop = [], threading.Event()

        def listen():
            with _get(events, token, accept="text/event-stream") as stream:
                while not stream.readline().startswith(b"event: dashboard"):
                    pass
                opened.append(True)
                stop.wait(60)

        listeners = [threading.Thread(target=listen, daemon=True) for _ in range(STREAMS)]
        for listener in listeners:
            listener.start()
        deadline = time.monotonic() + 30
        while len(opened) < STREAMS and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(opened) == STREAMS

        seconds = []
        for _ in range(20):
            started = time.monotonic()
            with _get(f"{url}/api/experiments/{experiment.pk}/dashboard/", token) as response:
                assert response.status == 200
            seconds.append(time.monotonic() - started)
        print(f"dashboard/ with {STREAMS} streams open: max {max(seconds) * 1000:.0f} ms")
        assert max(seconds) < 1.0, seconds
        # The pool's bound (DB_POOL_MAX_SIZE, 10), not one connection per stream (35 with DB_POOL=false:
        # a stream's thread would keep its persistent connection for the stream's lifetime).
        assert _server_connections() <= 10

        # One subscription for the experiment's streams, ended when the last browser leaves.
        subscribers = lambda: redis.Redis.from_url(settings.REDIS_URL).pubsub_numsub(channel)[0][1]  # noqa: E731
        assert subscribers() == 1
        stop.set()
        for listener in listeners:
            listener.join(timeout=10)
        wait_for(lambda: subscribers() == 0, timeout=10, what="the streams' subscriptions to end")
