"""The web server's entry point: gunicorn with uvicorn workers (docker-compose.yml), uvicorn alone
in the demo. Two of Django's own applications serve the views, neither changed:

- the dashboard's live stream (:mod:`raterapp.api.events`), an async view that waits on Redis for
  minutes, is served by Django's ASGI handler, in the event loop;
- every other view is sync, and served by Django's WSGI handler (:class:`ThreadedWSGI`), each
  request in a thread of its own, entering the middleware chain once. Django's ASGI handler
  crossed between the event loop and the request's thread for each sync-only middleware and for
  each ``process_request`` and ``process_response`` of the others: a dozen crossings a request, a
  large share of the rating loop's CPU.

In front of the WSGI handler, :class:`TakingTurns` lets at most ``WEB_THREADS`` requests per worker
in at once, callers taking turns.
"""

from __future__ import annotations

import asyncio
import os
import re
from concurrent.futures import ThreadPoolExecutor
from tempfile import SpooledTemporaryFile
from typing import cast

from a2wsgi.wsgi import Body, build_environ
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application
from django.http.cookie import parse_cookie

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "raterapp.settings")
# Each request's sync code runs in a thread of its own, so a persistent connection per thread
# would never be reused: a pool per process instead (settings.py, DB_POOL).
if not os.environ.get("DB_POOL"):  # unset or empty (.env.example's DB_POOL=)
    os.environ["DB_POOL"] = "true"

STREAM = re.compile(r"^/api/experiments/[^/]+/events/$")
LIVENESS = "/api/health/live/"


class ThreadedWSGI:
    """A WSGI application (Django's handler) under ASGI. A request's body is read in the event
    loop (in memory up to ``FILE_UPLOAD_MAX_MEMORY_SIZE``, on disk beyond, as Django's ASGI
    handler keeps it); then the request runs whole in a thread started for it: the middleware
    chain, the view, the response's body and its ``close()``, Django's end of the request
    (``request_finished``: the database connection goes back to the pool). The event loop then
    sends the response, with no thread waiting on the client. A streamed response's chunks are
    collected in the thread first, as Django's ASGI handler collects those of a sync iterator,
    and go out one message each, at the client's pace.

    A thread per request, as Django's ASGI handler gives a request's sync code: a pool's
    long-lived thread, busy almost all the time, kept a submit 15-20% longer in Django under the
    rating loop's load (bench/results/asgi_handler.md), waiting longer for a core after each
    database round trip.

    The thread never waits for the event loop or the client. Under a2wsgi's ``WSGIMiddleware`` it
    reads the body from the client and hands over each message of the response, waiting for the
    event loop each time, and for the client once ten are queued (bench/results/asgi_handler.md).
    The WSGI environ is a2wsgi's."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":  # as Django's ASGI handler: uvicorn then skips the lifespan
            raise ValueError(f"the sync views serve HTTP, not {scope['type']}")
        body = await _body_read(receive)
        if body is None:
            return  # the client left before sending it all
        # a2wsgi types the body as its own reader; it only becomes ``wsgi.input``, which any file is
        environ = build_environ(scope, cast(Body, body))
        if "CONTENT_LENGTH" not in environ:  # a chunked upload: Django reads no more than this
            environ["CONTENT_LENGTH"] = str(body.tell())
        body.seek(0)
        status, headers, chunks = await _in_a_thread_of_its_own(self._respond, environ, body)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if len(chunks) > 1:  # streamed
            for chunk in chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": chunks[0] if len(chunks) == 1 else b""})

    def _respond(self, environ, body) -> tuple[int, list[tuple[bytes, bytes]], list[bytes]]:
        """In the request's thread: the status, headers and body chunks of ``app``'s response."""
        started: list = []
        chunks: list[bytes] = []

        def start_response(status, headers, exc_info=None):
            started[:] = status, headers  # nothing is sent before the end: a second call replaces it
            return chunks.append

        try:
            response = self.app(environ, start_response)
            try:
                chunks.extend(chunk for chunk in response if chunk)
            finally:
                close = getattr(response, "close", None)  # Django's responses have one; PEP 3333 allows none
                if close is not None:
                    close()
        finally:
            body.close()
        status, headers = started
        # Names as Django writes them (its ASGI handler keeps their case too, for clients that read
        # only those); values stripped: each cookie comes as " name=value; ..." (WSGI servers strip).
        encoded = [(name.encode("latin-1"), value.strip().encode("latin-1")) for name, value in headers]
        return int(status[:3]), encoded, chunks


async def _in_a_thread_of_its_own(function, *args):
    """``function(*args)`` in a thread started for it, which ends with it."""
    thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wsgi")
    try:
        return await asyncio.get_running_loop().run_in_executor(thread, function, *args)
    finally:
        thread.shutdown(wait=False)


async def _body_read(receive) -> SpooledTemporaryFile | None:
    """The request's whole body, its file position at its end; ``None`` if the client left first."""
    body = SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE)
    while True:
        message = await receive()
        if message["type"] != "http.request":
            body.close()
            return None
        body.write(message.get("body", b""))
        if not message.get("more_body", False):
            return body


class TakingTurns:
    """An ASGI middleware: at most ``limit`` requests (0: no limit) in ``app`` at once, callers
    taking turns; the others wait in the event loop, where waiting costs nothing. Without it every
    request gets a thread at once, and on a few cores they share the GIL: each one's time in Django
    (``Server-Timing``) stretches with their number, and so do the row locks they hold.

    A request takes its turn once its body has arrived (``app`` reads it all before it enters
    Django, as :class:`ThreadedWSGI` and Django's ASGI handler do), so a slow client's upload holds
    up no other, and keeps it until its response is sent, except a streamed one, whose chunks go
    out at the client's pace. Handed on when the response starts, the turn let one request's
    sending run beside the next one's view: a tenth fewer verdicts (bench/results/judging.md).

    A caller (an API token or a session; anonymous requests are not told apart) waits for a turn
    with at most ``limit - 1`` of its requests (one when ``limit`` is 1), its others waiting behind
    them: a caller with many connections takes turns with the others instead of queueing all its
    requests ahead of theirs. One rater polling from 8 connections otherwise held every other
    rater's requests behind 4 of theirs, 429s included (issue 33, bench/results/fair_limits.md).
    """

    def __init__(self, app, *, limit: int):
        self.app = app
        self.limit = limit
        self.slots = asyncio.Semaphore(max(limit, 1))  # bound to the event loop of its first wait
        self.lines: dict[bytes, _Line] = {}

    async def __call__(self, scope, receive, send):
        if self.limit <= 0 or scope["type"] != "http":
            return await self.app(scope, receive, send)
        caller = _caller(scope)
        line = self._line_joined(caller)
        turn = _Turn(self.slots, line)

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
            return await self.app(scope, receive_then_take_turn, send_streamed_without_turn)
        finally:
            turn.give_back()
            self._line_left(caller, line)

    def _line_joined(self, caller: bytes | None) -> _Line | None:
        if caller is None:
            return None
        line = self.lines.get(caller)
        if line is None:
            line = self.lines[caller] = _Line(max(1, self.limit - 1))
        line.requests += 1
        return line

    def _line_left(self, caller: bytes | None, line: _Line | None) -> None:
        if caller is not None and line is not None:
            line.requests -= 1
            if not line.requests:
                del self.lines[caller]


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


def sync_views(wsgi_app, *, limit: int):
    """The ASGI application of the sync views: ``wsgi_app``, ``limit`` requests in it at once
    (0: no limit), callers taking turns."""
    return TakingTurns(ThreadedWSGI(wsgi_app), limit=limit)


class StreamsApart:
    """The live streams (they wait on Redis, not on a thread, and last minutes) to ``streams``,
    Django's ASGI handler, which runs async views in the event loop; the liveness probe answered
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

views_application = sync_views(get_wsgi_application(), limit=settings.WEB_THREADS)
application = StreamsApart(views_application, streams=django_application)
