"""The ASGI entry point (gunicorn's uvicorn workers, the demo): Django's ASGI handler for the live
streams and its WSGI handler for the sync views, taking turns, with PostgreSQL connections from a
pool, as ``cp .env.example .env`` and docker-compose.yml give it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.raterapp.helpers.asgi import COMPOSE, asgi_scope, views_counted
from tests.raterapp.helpers.settings import env_example

ROOT = Path(__file__).resolve().parents[2]


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
    assert asgi["app"] == "ASGIHandler"  # the streams'; the sync views have Django's WSGI handler
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


class Gate:
    """Where a client holds a request up (its body still on the way, the response not yet read)
    until the test opens it; ``reached`` once the request waits there."""

    def __init__(self):
        self.reached, self.opened = asyncio.Event(), asyncio.Event()

    async def passed(self):
        self.reached.set()
        await self.opened.wait()


async def _served(app, path: str, *, body_gate: Gate | None = None, read_gate: Gate | None = None) -> list[str]:
    """One request through ``app``: its body arrives once ``body_gate`` opens, and the client reads
    each chunk of the response's body once ``read_gate`` opens (at once without them). The ASGI
    messages sent, by type."""
    sent, asked = [], []

    async def receive():
        if not asked:
            asked.append(True)
            if body_gate is not None:
                await body_gate.passed()
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # no disconnect: the handler stops listening once it answered

    async def send(message):
        if message["type"] == "http.response.body" and message.get("body") and read_gate is not None:
            await read_gate.passed()
        sent.append(message["type"])

    await app(asgi_scope(path), receive, send)
    return sent


def test_at_most_web_threads_requests_are_in_django_at_once():
    app, views = views_counted(limit=3)

    async def main():
        slow = [_served(app, f"/slow/{k}") for k in range(3)]
        quick = [_served(app, f"/api/judgements/{k}") for k in range(10)]
        return await asyncio.gather(*slow, *quick)

    answers = asyncio.run(main())
    assert views.most == 3
    assert all(sent == ["http.response.start", "http.response.body"] for sent in answers)
    # The quick ones waited their turn: none entered before a slow one had left (the order in which
    # the slow ones' threads enter and leave is the machine's, not the product's).
    quick_entered = [done for path, done in views.entered if path.startswith("/api/")]
    assert len(quick_entered) == 10 and min(quick_entered) >= 1, views.entered
    assert views.finished[0].startswith("/slow/"), views.finished
    unlimited, views = views_counted(limit=0)

    async def all_at_once():
        await asyncio.gather(*[_served(unlimited, f"/slow/{k}") for k in range(10)])

    asyncio.run(all_at_once())
    assert views.most == 10


def test_a_slow_upload_or_download_holds_up_no_other_request():
    """A request takes its turn once its body has arrived, and a streamed response (an export)
    goes out without one; a plain response keeps the turn until it is sent. The slow clients are
    held at gates, not by timers: another request is served while they wait, however loaded the
    machine (held up, it would wait for the gate, which opens only after it)."""
    app, views = views_counted(limit=1)
    patience = 10  # seconds: a request that waits this long waits for the gate

    async def beside(path: str, **gates: Gate):
        (gate,) = gates.values()
        slow = asyncio.create_task(_served(app, path, **gates))
        await asyncio.wait_for(gate.reached.wait(), timeout=patience)
        await asyncio.wait_for(_served(app, "/api/judgements/"), timeout=patience)
        assert not slow.done()
        gate.opened.set()
        return await slow

    async def main():
        await beside("/upload/", body_gate=Gate())  # the client still uploading
        exported = await beside("/export/", read_gate=Gate())  # the client still downloading
        gate = Gate()
        plain = asyncio.create_task(_served(app, "/answer/", read_gate=gate))
        await asyncio.wait_for(gate.reached.wait(), timeout=patience)
        waiting = asyncio.create_task(_served(app, "/api/judgements/"))
        await asyncio.sleep(0.15)
        assert not waiting.done()  # a plain answer is sent within its turn
        gate.opened.set()
        await asyncio.gather(plain, waiting)
        return exported

    exported = asyncio.run(main())
    assert exported == ["http.response.start", *["http.response.body"] * 3]  # two chunks, then the end
    assert views.finished == [
        "/api/judgements/", "/upload/", "/export/", "/api/judgements/", "/answer/", "/api/judgements/"
    ]  # fmt: skip
    assert views.most == 1


def test_the_view_reads_the_whole_body_and_a_client_that_leaves_before_sending_it_is_not_served(settings):
    body = bytes(range(256)) * (settings.FILE_UPLOAD_MAX_MEMORY_SIZE // 200)  # on disk: twice the memory's share
    pieces = [body[k : k + 100_000] for k in range(0, len(body), 100_000)]
    app, views = views_counted(limit=1)

    async def posted(messages, headers=()):
        sent = []

        async def receive():
            if messages:
                return messages.pop(0)
            await asyncio.Event().wait()

        async def send(message):
            sent.append(message)

        await app({**asgi_scope("/upload/", "POST"), "headers": [*headers]}, receive, send)
        return sent

    whole = [{"type": "http.request", "body": p, "more_body": k < len(pieces) - 1} for k, p in enumerate(pieces)]
    length = (b"content-length", str(len(body)).encode())
    chunked = [m.copy() for m in whole]  # no Content-Length: Django reads what arrived
    assert asyncio.run(posted(whole, [length]))[0]["status"] == 200
    assert asyncio.run(posted(chunked))[0]["status"] == 200
    assert views.bodies == [body, body]
    left = [{"type": "http.request", "body": pieces[0], "more_body": True}, {"type": "http.disconnect"}]
    assert asyncio.run(posted(left, [length])) == []
    assert len(views.bodies) == 2 and not app.lines


def _asgi_get(app, path: str) -> int:
    """GET ``path`` through the ASGI ``app`` in this process; the response's status."""
    return _asgi_got(app, path)["status"]


def _asgi_got(app, path: str) -> dict:
    """GET ``path`` through the ASGI ``app`` in this process; the response's start message."""
    messages, asked = [], []

    async def receive():
        if not asked:
            asked.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # no disconnect: the handler stops listening once it answered

    async def send(message):
        messages.append(message)

    scope = asgi_scope(path)
    asyncio.run(app(scope, receive, send))
    return next(m for m in messages if m["type"] == "http.response.start")


def test_a_sync_view_under_asgi_enters_its_thread_once_not_at_every_middleware(monkeypatch):
    """The rating loop's requests are sync views: Django's ASGI handler crossed from the event loop
    to the request's thread and back for each middleware; the sync views' application hands the
    request to Django's WSGI handler in a thread once, and runs no ``sync_to_async`` at all."""
    from asgiref import sync
    from django.core.handlers.asgi import ASGIHandler

    from raterapp import asgi

    crossings = {}
    original = sync.SyncToAsync.__call__
    for name, handler in (("django", ASGIHandler()), ("ours", asgi.views_application)):
        count = 0

        async def counting(self, *args, **kwargs):
            nonlocal count
            count += 1
            return await original(self, *args, **kwargs)

        monkeypatch.setattr(sync.SyncToAsync, "__call__", counting)
        assert _asgi_get(handler, "/login/") == 200
        monkeypatch.setattr(sync.SyncToAsync, "__call__", original)
        crossings[name] = count
    assert crossings["ours"] == 0 and crossings["django"] >= 8, crossings


def test_the_headers_of_djangos_wsgi_handler_go_out_as_its_asgi_handler_sent_them():
    """Names in Django's case, and values without the space Django's WSGI handler puts before a
    cookie (h11 refuses it: every page that set a cookie answered 500)."""
    from django.core.handlers.asgi import ASGIHandler

    from raterapp import asgi

    headers = _asgi_got(asgi.views_application, "/login/")["headers"]
    assert [name for name, _ in headers] == [name for name, _ in _asgi_got(ASGIHandler(), "/login/")["headers"]]
    assert all(value == value.strip() for _, value in headers), headers
    assert any(name == b"Set-Cookie" and value.startswith(b"csrftoken=") for name, value in headers), headers
    assert b"Content-Type" in dict(headers) and b"X-Frame-Options" in dict(headers), headers


def test_the_application_sends_streams_to_djangos_asgi_handler_and_the_rest_to_its_wsgi_handler():
    from django.core.handlers.asgi import ASGIHandler
    from django.core.handlers.wsgi import WSGIHandler

    from raterapp import asgi

    assert type(asgi.views_application) is asgi.TakingTurns
    assert asgi.views_application.limit == 1  # WEB_THREADS' default
    assert type(asgi.views_application.app) is asgi.ThreadedWSGI
    assert type(asgi.views_application.app.app) is WSGIHandler
    assert type(asgi.django_application) is ASGIHandler
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
