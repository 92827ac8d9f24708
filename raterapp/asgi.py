"""The web server's entry point: gunicorn with uvicorn workers (docker-compose.yml), uvicorn alone
in the demo. Django serves every view under ASGI; only the dashboard's live stream
(:mod:`raterapp.api.events`) is asynchronous, the sync views run in a thread per request, at most
``WEB_THREADS`` of them in Django at once per worker."""

from __future__ import annotations

import asyncio
import os
import re

from asgiref.sync import sync_to_async
from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler
from django.http.cookie import parse_cookie

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "raterapp.settings")
# Each request's sync code runs in a thread of its own, so a persistent connection per thread
# would never be reused: a pool per process instead (settings.py, DB_POOL).
if not os.environ.get("DB_POOL"):  # unset or empty (.env.example's DB_POOL=)
    os.environ["DB_POOL"] = "true"

STREAM = re.compile(r"^/api/experiments/[^/]+/events/$")
LIVENESS = "/api/health/live/"


class SyncViewsHandler(ASGIHandler):
    """Django's ASGI handler for the sync views, with two changes.

    The middleware chain is built as under WSGI and entered once, in the request's thread. Built
    for ASGI, as Django builds it, a request crossed between the event loop and its thread for
    each sync-only middleware and for each ``process_request`` and ``process_response`` of the
    others: a dozen crossings a request, a large share of the rating loop's CPU.

    At most ``limit`` requests (0: no limit) are in Django at once; the others wait in the event
    loop, where waiting costs nothing. Without it every request gets a thread at once, and on a
    few cores they share the GIL: each one's time in Django (``Server-Timing``) stretches with
    their number, and so do the row locks they hold. A request takes its turn once its body has
    arrived, so a slow client's upload holds up no other, and keeps it until its response is
    sent, except a streamed one, whose chunks go out at the client's pace.

    A caller (an API token or a session; anonymous requests are not told apart) waits for a turn
    with at most ``limit - 1`` of its requests (one when ``limit`` is 1), its others waiting behind
    them: a caller with many connections takes turns with the others instead of queueing all its
    requests ahead of theirs. One rater polling from 8 connections otherwise held every other
    rater's requests behind 4 of theirs, 429s included (issue 33, bench/results/fair_limits.md).
    """

    def __init__(self, *, limit: int = 0):
        super().__init__()
        self.limit = limit
        self._slots: asyncio.Semaphore | None = None  # made inside the worker's event loop
        self._lines: dict[bytes, _Line] = {}

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)

    async def handle(self, scope, receive, send):
        if self.limit <= 0:
            return await super().handle(scope, receive, send)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limit)
        caller = _caller(scope)
        line = self._line_joined(caller)
        turn = _Turn(self._slots, line)

        async def receive_then_take_turn():
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                await turn.take()
            return message

        async def send_streamed_without_turn(message):
            if message["type"] == "http.response.body" and message.get("more_body", False):
                turn.give_back()
            await send(message)

        try:
            return await super().handle(scope, receive_then_take_turn, send_streamed_without_turn)
        finally:
            turn.give_back()
            self._line_left(caller, line)

    def _line_joined(self, caller: bytes | None) -> _Line | None:
        if caller is None:
            return None
        line = self._lines.get(caller)
        if line is None:
            line = self._lines[caller] = _Line(max(1, self.limit - 1))
        line.requests += 1
        return line

    def _line_left(self, caller: bytes | None, line: _Line | None) -> None:
        if line is not None:
            line.requests -= 1
            if not line.requests:
                del self._lines[caller]


def _caller(scope) -> bytes | None:
    """Who sends the request, as its headers tell without a lookup: its Authorization header, else
    its session cookie; ``None`` for neither."""
    cookie = None
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            return value
        if name == b"cookie":
            cookie = value
    if cookie is None:
        return None
    session = parse_cookie(cookie.decode("latin-1")).get(settings.SESSION_COOKIE_NAME)
    return session.encode() if session else None


class _Line(asyncio.Semaphore):
    """A caller's requests that may wait for a turn at once, and how many of theirs are here."""

    def __init__(self, value: int):
        super().__init__(value)
        self.requests = 0


class _Turn:
    """A request's slot of a semaphore (and of its caller's line): taken at most once, given back
    at most once."""

    def __init__(self, slots: asyncio.Semaphore, line: _Line | None = None):
        self.slots, self.line = slots, line
        self.state = "waiting"

    async def take(self) -> None:
        if self.state != "waiting":
            return
        if self.line is not None:
            await self.line.acquire()
        try:
            await self.slots.acquire()
        except BaseException:
            if self.line is not None:
                self.line.release()
            raise
        self.state = "held"

    def give_back(self) -> None:
        if self.state == "held":
            self.slots.release()
            if self.line is not None:
                self.line.release()
        self.state = "done"


class StreamsApart:
    """The live streams (they wait on Redis, not on a thread, and last minutes) to ``streams``,
    Django's own handler, which runs async views in the event loop; the liveness probe answered
    here; everything else to ``views``."""

    def __init__(self, views, *, streams):
        self.views = views
        self.streams = streams

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and STREAM.match(scope["path"]):
            return await self.streams(scope, receive, send)
        if scope["type"] == "http" and scope["path"] == LIVENESS:
            return await _liveness(send)
        return await self.views(scope, receive, send)


async def _liveness(send) -> None:
    """docker-compose.yml's healthcheck (raterapp/liveness.py): 200 while this worker's event loop
    answers and its database pool is not starved (raterapp/web_worker.py). It asks neither the
    database nor Redis, and takes no turn in Django: an outage of either is /api/health/'s to
    report, and must not have the web tier restarted."""
    from django.conf import settings

    from raterapp.web_worker import pool_starved_now

    limit = settings.WEB_POOL_STARVED_SECONDS
    ok = not (limit > 0 and pool_starved_now() >= limit)
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": 200 if ok else 503, "headers": headers})
    await send({"type": "http.response.body", "body": b'{"ok":true}' if ok else b'{"ok":false}'})


django_application = get_asgi_application()  # django.setup(); serves the streams

from django.conf import settings  # noqa: E402 - configured by get_asgi_application()

views_application = SyncViewsHandler(limit=settings.WEB_THREADS)
application = StreamsApart(views_application, streams=django_application)
