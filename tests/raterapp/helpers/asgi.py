"""The ASGI entry point's test doubles (raterapp/asgi.py): an ASGI request's scope, and the sync
views' application over a WSGI application that stands for Django's handler and counts."""

from __future__ import annotations

import threading
import time

COMPOSE = {"DATABASE_URL": "postgres://rater:rater@db:5432/rater", "REDIS_URL": "redis://redis:6379/0"}


def asgi_scope(path: str, method: str = "GET") -> dict:
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 50000), "server": ("testserver", 80),
    }  # fmt: skip


class CountedViews:
    """A WSGI application standing for Django's handler: it reads the request's body, counts how
    many requests are in it at once (from its call to its response's ``close()``, Django's end of
    the request), and takes 50 ms on /slow/ paths, 10 ms on others; /export/ paths answer with a
    streamed body of two chunks, the others with one."""

    def __init__(self):
        self.inside, self.most, self.finished, self.bodies = 0, 0, [], []
        self.entered: list[tuple[str, int]] = []  # each request's path and how many had finished then
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
            self.entered.append((path, len(self.finished)))
        self.bodies.append(environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0)))  # as Django reads it
        time.sleep(0.05 if path.startswith("/slow/") else 0.01)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return _Response(self, path, [b"first chunk", b"second chunk"] if path.startswith("/export/") else [b"answer"])


class _Response:
    def __init__(self, views: CountedViews, path: str, chunks: list[bytes]):
        self.views, self.path, self.chunks = views, path, chunks

    def __iter__(self):
        return iter(self.chunks)

    def close(self):
        time.sleep(0.002)
        with self.views.lock:
            self.views.inside -= 1
            self.views.finished.append(self.path)


def views_counted(limit: int):
    """The sync views' application (:func:`raterapp.asgi.sync_views`) over a :class:`CountedViews`;
    both."""
    from raterapp.asgi import sync_views

    views = CountedViews()
    return sync_views(views, limit=limit), views
