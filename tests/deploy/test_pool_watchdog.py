"""Issue 33: a starved database pool cannot last. The production web command (gunicorn, one
uvicorn worker) runs with a pool of 2 connections, no limit on requests in Django at once, and
WEB_POOL_STARVED_SECONDS=4. The test takes an ACCESS EXCLUSIVE lock on the API token table from
its own connection, so every token-authenticated request holds a pool connection while it waits
for the lock, and the requests after the second wait for the pool:

- the worker logs the cause and ends, and gunicorn starts another one (its pid changes);
- the liveness route answers meanwhile, without the database;
- once the lock is released, the server answers 200 again.

Before the watchdog, the worker stayed up with its pool exhausted for as long as the connections
were held (after a leak: until someone restarted it).
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request

import psutil
import pytest
from django.conf import settings
from django.db import connection, transaction

from raterapp.models import ApiToken
from raterapp.services.accounts.api_tokens import api_token_create
from tests.browser.asgi_server import asgi_server_started
from tests.raterapp.factories import UserFactory

from .processes import command_line, http_status, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"),
        reason="the server's connection pool is PostgreSQL's (CI sets DATABASE_URL)",
    ),
]
STARVED_SECONDS = 4


def _status(url: str, token: str, timeout: float = 30) -> int | str:
    request = urllib.request.Request(url, headers={"Authorization": f"Token {token}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError as error:  # the worker ended under the request
        return type(error).__name__


def _workers(port: int) -> list[int]:
    """The pids of the gunicorn workers serving ``port`` (the children of its master)."""
    bind = f"127.0.0.1:{port}"
    masters = [p for p in psutil.Process().children() if bind in command_line(p)]
    return sorted(child.pid for master in masters for child in master.children())


def test_a_worker_whose_pool_stays_exhausted_is_replaced_and_the_server_recovers(transactional_db, tmp_path):
    engineer = UserFactory(roles=["engineer"])
    token = api_token_create(actor=engineer)[1]
    environment = {"DB_POOL_MAX_SIZE": "2", "WEB_THREADS": "0", "WEB_POOL_STARVED_SECONDS": str(STARVED_SECONDS)}
    with asgi_server_started(tmp_path, workers=1, environment=environment) as url:
        port = int(url.rsplit(":", 1)[1])
        experiments = f"{url}/api/experiments/"
        assert _status(experiments, token) == 200
        [worker] = _workers(port)
        statuses: list[int | str] = []
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {ApiToken._meta.db_table} IN ACCESS EXCLUSIVE MODE")
            starving = [
                threading.Thread(target=lambda: statuses.append(_status(experiments, token)), daemon=True)
                for _ in range(4)
            ]
            started = time.monotonic()
            for thread in starving:
                thread.start()
            assert http_status(f"{url}/api/health/live/", timeout=5) == 200  # no database needed
            wait_until(
                lambda: _workers(port) not in ([], [worker]),
                timeout=STARVED_SECONDS + 30,
                what="gunicorn to replace the starved worker",
            )
            replaced_after = time.monotonic() - started
        # The lock is released: the new worker has a pool of its own.
        wait_until(lambda: _status(experiments, token, timeout=10) == 200, timeout=30, what="a 200 again")
        [new_worker] = _workers(port)
        assert new_worker != worker
        assert all(_status(experiments, token, timeout=5) == 200 for _ in range(10))
        assert http_status(f"{url}/api/health/live/", timeout=5) == 200
    for thread in starving:
        thread.join(timeout=30)
    print(
        f"\nworker {worker} replaced by {new_worker} {replaced_after:.1f} s after the lock; starved requests: {statuses}"
    )
    assert STARVED_SECONDS <= replaced_after < STARVED_SECONDS + 30
    assert 200 not in statuses  # every one of them was stuck behind the lock or the pool
    log = (tmp_path / "gunicorn.log").read_text()
    assert f"Worker {worker}: database pool exhausted for " in log, log
    assert "(WEB_POOL_STARVED_SECONDS): all 2 connections handed out" in log, log
    assert f"Booting worker with pid: {new_worker}" in log, log
