"""A real Celery worker process for end-to-end tests, on the test database and the real broker.

In CI that is PostgreSQL and Redis (``.ci/run`` sets ``DATABASE_URL`` and ``REDIS_URL``);
without them, a SQLite file and the file-system broker, so the tests run anywhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{user}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def queue_of(task_name: str) -> str:
    """The queue ``task_name`` goes to (settings.CELERY_TASK_ROUTES; suffixed per pytest-xdist worker)."""
    return settings.CELERY_TASK_ROUTES[task_name]["queue"]


def all_queues() -> str:
    return ",".join(sorted({route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}))


@contextmanager
def celery_worker_started(
    log_dir: Path, *, queues: str = "", name: str = "all", command=(), pool: str = "solo", env: dict | None = None
):
    """A ``celery worker`` process on ``queues`` (default: every queue, like the demo's worker),
    started with ``command`` (default: ``python -m celery -A raterapp``), with the ``pool``
    (``prefork``: one child process) and more environment ``env``; yield it once it answers a ping."""
    from raterapp.celery import app

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": _database_url(),
        "CONN_MAX_AGE": "0",
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "CELERY_TASK_ALWAYS_EAGER": "false",
        **(env or {}),
    }
    hostname = f"e2e-{os.getpid()}-{name}@localhost"
    log_path = log_dir / f"worker-{name}.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    worker = subprocess.Popen(
        [*(command or [sys.executable, "-m", "celery", "-A", "raterapp"]), "worker", f"--pool={pool}", "--concurrency=1", "--loglevel=INFO",
         "-Q", queues or all_queues(), "--hostname", hostname, "--without-gossip", "--without-mingle"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while not app.control.ping(destination=[hostname], timeout=0.5):
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Celery worker did not start:\n" + log_path.read_text())
        yield worker
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        log.close()


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """One ``celery worker`` process on both queues, as in the demo."""
    with celery_worker_started(tmp_path) as worker:
        yield worker


def wait_for(condition, *, timeout: float = 90.0, interval: float = 0.2, what: str = "condition"):
    """Poll ``condition()`` until it returns something truthy, or fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
