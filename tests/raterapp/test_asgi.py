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
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_under_asgi_connections_come_from_a_pool(tmp_path):
    asgi = loaded("raterapp.asgi", {**env_example(), **COMPOSE, "SECRET_KEY": "k"}, tmp_path)
    assert asgi["app"] == "ASGIHandler"  # the streams'; the sync views have SyncViewsHandler
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


def _asgi_get(app, path: str) -> int:
    """GET ``path`` through the ASGI ``app`` in this process; the response's status."""
    messages, asked = [], []

    async def receive():
        if not asked:
            asked.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # no disconnect: the handler stops listening once it answered

    async def send(message):
        messages.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    return next(m["status"] for m in messages if m["type"] == "http.response.start")


def test_a_sync_view_under_asgi_enters_its_thread_once_not_at_every_middleware(monkeypatch):
    """The rating loop's requests are sync views: Django's ASGI handler crossed from the event loop
    to the request's thread and back for each middleware; ours builds the chain as under WSGI."""
    from asgiref import sync
    from django.core.handlers.asgi import ASGIHandler

    from raterapp.asgi import SyncViewsHandler

    crossings = {}
    original = sync.SyncToAsync.__call__
    for name, handler in (("django", ASGIHandler()), ("ours", SyncViewsHandler())):
        count = 0

        async def counting(self, *args, **kwargs):
            nonlocal count
            count += 1
            return await original(self, *args, **kwargs)

        monkeypatch.setattr(sync.SyncToAsync, "__call__", counting)
        assert _asgi_get(handler, "/login/") == 200
        monkeypatch.setattr(sync.SyncToAsync, "__call__", original)
        crossings[name] = count
    # ours: request_started, the chain, request_finished
    assert crossings["ours"] <= 3 < 8 <= crossings["django"], crossings


def test_the_application_sends_streams_to_djangos_handler_and_the_rest_to_the_sync_chain():
    from raterapp import asgi

    assert type(asgi.views_application) is asgi.SyncViewsHandler
    assert asgi.application.app is asgi.views_application
    assert asgi.application.streams is asgi.django_application
    seen = []

    def recorder(name):
        async def app(scope, receive, send):
            seen.append((name, scope["path"]))

        return app

    routed = asgi.ConcurrencyLimit(recorder("views"), limit=2, streams=recorder("streams"))
    for path in ("/api/experiments/7/events/", "/api/judgements/", "/experiments/7/"):
        asyncio.run(routed({"type": "http", "path": path}, None, None))
    assert seen == [
        ("streams", "/api/experiments/7/events/"),
        ("views", "/api/judgements/"),
        ("views", "/experiments/7/"),
    ]
