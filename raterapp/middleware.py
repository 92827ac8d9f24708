"""Request middleware of the app."""

from __future__ import annotations

import time


class ServerTimingMiddleware:
    """Adds ``Server-Timing: app;dur=<ms>``: the time the request spent in Django, as the
    browser's network panel and load tests (``bench/bench_judging.py``) read it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        response["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.2f}"
        return response
