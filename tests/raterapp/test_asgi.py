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


def _scope(path: str, method: str = "GET") -> dict:
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
    }  # fmt: skip


async def _served(app, path: str, *, body_after: float = 0.0, body_sent_in: float = 0.0) -> list[str]:
    """One request through ``app``: its body arrives after ``body_after`` s, and the client takes
    ``body_sent_in`` s to read each chunk of the response's body. The ASGI messages sent, by type."""
    sent, asked = [], []

    async def receive():
        if not asked:
            asked.append(True)
            await asyncio.sleep(body_after)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # no disconnect: the handler stops listening once it answered

    async def send(message):
        if message["type"] == "http.response.body" and message.get("body"):
            await asyncio.sleep(body_sent_in)
        sent.append(message["type"])

    await app(_scope(path), receive, send)
    return sent


def _views_counted(limit: int):
    """A SyncViewsHandler whose middleware and view (``get_response_async``) only count how many
    requests are in them at once, and take 50 ms on /slow/ paths, 10 ms on others; /export/
    paths answer with a streamed response of two chunks, the others with a plain one."""
    from django.http import HttpResponse, StreamingHttpResponse

    from raterapp.asgi import SyncViewsHandler

    handler = SyncViewsHandler(limit=limit)
    handler.inside, handler.most, handler.finished = 0, 0, []

    async def get_response_async(request):
        handler.inside += 1
        handler.most = max(handler.most, handler.inside)
        await asyncio.sleep(0.05 if request.path.startswith("/slow/") else 0.01)
        handler.inside -= 1
        handler.finished.append(request.path)
        if request.path.startswith("/export/"):

            async def chunks():
                yield b"first chunk"
                yield b"second chunk"

            return StreamingHttpResponse(chunks())
        return HttpResponse(b"answer")

    handler.get_response_async = get_response_async
    return handler


def test_at_most_web_threads_requests_are_in_django_at_once():
    handler = _views_counted(limit=3)

    async def main():
        slow = [_served(handler, f"/slow/{k}") for k in range(3)]
        quick = [_served(handler, f"/api/judgements/{k}") for k in range(10)]
        return await asyncio.gather(*slow, *quick)

    answers = asyncio.run(main())
    assert handler.most == 3
    assert all(sent == ["http.response.start", "http.response.body"] for sent in answers)
    assert sorted(handler.finished[:3]) == ["/slow/0", "/slow/1", "/slow/2"]  # the quick ones waited their turn
    unlimited = _views_counted(limit=0)

    async def all_at_once():
        await asyncio.gather(*[_served(unlimited, f"/x/{k}") for k in range(10)])

    asyncio.run(all_at_once())
    assert unlimited.most == 10


def test_a_slow_upload_or_download_holds_up_no_other_request():
    """A request takes its turn once its body has arrived, and a streamed response (an export)
    goes out without one; a plain response keeps the turn until it is sent."""
    handler = _views_counted(limit=1)

    async def beside(first):
        task = asyncio.create_task(first)
        await asyncio.sleep(0.05)
        await asyncio.wait_for(_served(handler, "/api/judgements/"), timeout=0.15)
        assert not task.done()
        return await task

    async def main():
        await beside(_served(handler, "/upload/", body_after=0.3))  # the client still uploading
        await beside(_served(handler, "/export/", body_sent_in=0.3))  # the client still downloading
        plain = asyncio.create_task(_served(handler, "/answer/", body_sent_in=0.3))
        await asyncio.sleep(0.05)
        waiting = asyncio.create_task(_served(handler, "/api/judgements/"))
        await asyncio.sleep(0.15)
        assert not waiting.done()  # a plain answer is sent within its turn
        await asyncio.gather(plain, waiting)

    asyncio.run(main())
    assert handler.finished == [
        "/api/judgements/", "/upload/", "/export/", "/api/judgements/", "/answer/", "/api/judgements/"
    ]  # fmt: skip
    assert handler.most == 1


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

    scope = _scope(path)
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
    assert asgi.views_application.limit == 1  # WEB_THREADS' default
    assert asgi.application.views is asgi.views_application
    assert asgi.application.streams is asgi.django_application
    seen = []

    def recorder(name):
        async def app(scope, receive, send):
            seen.append((name, scope["path"]))

        return app

    routed = asgi.StreamsApart(recorder("views"), streams=recorder("streams"))
    for path in ("/api/experiments/7/events/", "/api/judgements/", "/experiments/7/"):
        asyncio.run(routed({"type": "http", "path": path}, None, None))
    assert seen == [
        ("streams", "/api/experiments/7/events/"),
        ("views", "/api/judgements/"),
        ("views", "/experiments/7/"),
    ]
