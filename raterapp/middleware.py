"""Request middleware of the app."""

from __future__ import annotations

import time

from django.http import HttpResponseBadRequest


class ServerTimingMiddleware:
    """Adds ``Server-Timing: app;dur=<ms>``: the time the request spent in Django, as the
    browser's network panel and load tests (``bench/bench_judging.py``) read it; to signed-in
    callers only (session or token: DRF sets the user on the request), since timings tell an
    anonymous prober which guesses cost the server more."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            response["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.2f}"
        return response


class MalformedRequestMiddleware:
    """Answers 400 to a request whose path or query string holds a NUL character (``?q=%00``):
    no view wants one, and PostgreSQL refuses it in a query (a 500 otherwise)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or any("\x00" in key + value for key, value in request.GET.items()):
            return HttpResponseBadRequest("Malformed request: a NUL character in the address.")
        return self.get_response(request)
