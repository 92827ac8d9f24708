"""The web server's entry point: gunicorn with uvicorn workers (docker-compose.yml), uvicorn alone
in the demo. Django serves every view under ASGI; only the dashboard's live stream
(:mod:`raterapp.api.events`) is asynchronous, the sync views run in a thread per request, at most
``WEB_THREADS`` of them at once per worker."""

import asyncio
import os
import re

from asgiref.sync import sync_to_async
from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "raterapp.settings")
# Each request's sync code runs in a thread of its own, so a persistent connection per thread
# would never be reused: a pool per process instead (settings.py, DB_POOL).
if not os.environ.get("DB_POOL"):  # unset or empty (.env.example's DB_POOL=)
    os.environ["DB_POOL"] = "true"

STREAM = re.compile(r"^/api/experiments/[^/]+/events/$")


class SyncViewsHandler(ASGIHandler):
    """Django's ASGI handler for the sync views: the middleware chain is built as under WSGI and
    entered once, in the request's thread. Built for ASGI, as Django builds it, a request crossed
    between the event loop and its thread for each sync-only middleware and for each
    ``process_request`` and ``process_response`` of the others: a dozen crossings a request, a
    large share of the rating loop's CPU."""

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)


class ConcurrencyLimit:
    """At most ``limit`` requests of this process in Django at once; the others wait in the event
    loop, where waiting costs nothing. Without it every request gets a thread at once, and on a
    few cores they share the GIL: each one's time in Django (``Server-Timing``) stretches with
    their number, and so do the row locks they hold. The live streams wait on Redis, not on a
    thread, and last minutes: they are not counted, and go to ``streams`` (Django's own handler,
    which runs async views in the event loop) when given."""

    def __init__(self, app, *, limit: int, streams=None):
        self.app = app
        self.streams = streams or app
        self.limit = limit
        self._slots: asyncio.Semaphore | None = None  # made inside the worker's event loop

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and STREAM.match(scope["path"]):
            return await self.streams(scope, receive, send)
        if self.limit <= 0 or scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limit)
        async with self._slots:
            return await self.app(scope, receive, send)


django_application = get_asgi_application()  # django.setup(); serves the streams

from django.conf import settings  # noqa: E402 - configured by get_asgi_application()

views_application = SyncViewsHandler()
application = ConcurrencyLimit(views_application, limit=settings.WEB_THREADS, streams=django_application)
