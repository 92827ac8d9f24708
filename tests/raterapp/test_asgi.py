"""The ASGI entry point (gunicorn's uvicorn workers, the demo): Django's ASGI handler, with
PostgreSQL connections from a pool, as ``cp .env.example .env`` and docker-compose.yml give it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.raterapp.test_settings import env_example

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = {"DATABASE_URL": "postgres://rater:rater@db:5432/rater", "REDIS_URL": "redis://redis:6379/0"}


def loaded(module: str, environment: dict[str, str], tmp_path: Path) -> dict:
    code = (
        f"import json, {module} as entry; from django.conf import settings; "
        "print(json.dumps({'app': type(getattr(entry, 'django_application', entry.application)).__name__, 'db': settings.DATABASES['default']}, default=str))"
    )
    env = {"PATH": os.environ["PATH"], "DATA_DIR": str(tmp_path / "data"), "SECRET_KEY": "k", **environment}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_under_asgi_connections_come_from_a_pool(tmp_path):
    asgi = loaded("raterapp.asgi", {**env_example(), **COMPOSE, "SECRET_KEY": "k"}, tmp_path)
    assert asgi["app"] == "ASGIHandler"
    assert asgi["db"]["OPTIONS"]["pool"] == {"min_size": 1, "max_size": 10, "timeout": 10}
    assert asgi["db"]["CONN_MAX_AGE"] == 0  # Django refuses persistent connections with a pool


def test_the_pool_can_be_turned_off_and_wsgi_keeps_persistent_connections(tmp_path):
    off = loaded("raterapp.asgi", {**env_example(), **COMPOSE, "SECRET_KEY": "k", "DB_POOL": "false"}, tmp_path)
    wsgi = loaded("raterapp.wsgi", {**env_example(), **COMPOSE, "SECRET_KEY": "k"}, tmp_path)
    for entry in (off, wsgi):
        assert "pool" not in entry["db"].get("OPTIONS", {})
        assert entry["db"]["CONN_MAX_AGE"] == 60


def test_the_embedded_sqlite_has_no_pool_under_asgi(tmp_path):
    asgi = loaded("raterapp.asgi", {"DEBUG": "true"}, tmp_path)
    assert asgi["db"]["ENGINE"] == "django.db.backends.sqlite3"
    assert "pool" not in asgi["db"]["OPTIONS"]


def test_the_asgi_application_runs_at_most_web_threads_requests_at_once_streams_aside():
    from raterapp.asgi import ConcurrencyLimit

    running, most, finished = 0, 0, []

    async def app(scope, receive, send):
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.05 if scope["path"].startswith("/slow") else 0.01)
        running -= 1
        finished.append(scope["path"])

    limited = ConcurrencyLimit(app, limit=3)

    async def main():
        slow = [limited({"type": "http", "path": f"/slow/{k}"}, None, None) for k in range(3)]
        quick = [limited({"type": "http", "path": f"/api/judgements/{k}"}, None, None) for k in range(10)]
        stream = limited({"type": "http", "path": "/api/experiments/1/events/"}, None, None)
        await asyncio.gather(*slow, *quick, stream)

    asyncio.run(main())
    assert most == 4  # three requests at a time, and the stream beside them
    # The stream did not wait for a slot held by the slow requests; the quick ones did.
    assert finished.index("/api/experiments/1/events/") < 3
    assert all(finished.index(f"/api/judgements/{k}") > 2 for k in range(10))
