"""The web server's entry point: gunicorn with uvicorn workers (docker-compose.yml), uvicorn alone
in the demo. Django serves every view under ASGI; only the dashboard's live stream
(:mod:`raterapp.api.events`) is asynchronous, the sync views run in a thread per request, at most
``WEB_THREADS`` of them at once per worker."""

import asyncio
import os
import re

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "raterapp.settings")
# Each request's sync code runs in a thread of its own, so a persistent connection per thread
# would never be reused: a pool per process instead (settings.py, DB_POOL).
if not os.environ.get("DB_POOL"):  # unset or empty (.env.example's DB_POOL=)
    os.environ["DB_POOL"] = "true"

STREAM = re.compile(r"^/api/experiments/[^/]+/events/$")


class ConcurrencyLimit:
    """At most ``limit`` requests of this process in Django at once; the others wait in the event
    loop, where waiting costs nothing. Without it every request gets a thread at once, and on a
    few cores they share the GIL: each one's time in Django (``Server-Timing``) stretches with
    their number, and so do the row locks they hold. The live streams wait on Redis, not on a
    thread, and last minutes: they are not counted."""

    def __init__(self, app, *, limit: int):
        self.app = app
        self.limit = limit
        self._slots: asyncio.Semaphore | None = None  # made inside the worker's event loop

    async def __call__(self, scope, receive, send):
        if self.limit <= 0 or scope["type"] != "http" or STREAM.match(scope["path"]):
            return await self.app(scope, receive, send)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limit)
        async with self._slots:
            return await self.app(scope, receive, send)


django_application = get_asgi_application()

from django.conf import settings  # noqa: E402 - configured by get_asgi_application()

application = ConcurrencyLimit(django_application, limit=settings.WEB_THREADS)
