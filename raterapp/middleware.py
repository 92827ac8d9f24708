"""Request middleware of the app."""

from __future__ import annotations

import logging
import time

from django.http import HttpResponse, HttpResponseBadRequest

from raterapp.exceptions import DATABASE_OUT_OF_REACH

logger = logging.getLogger(__name__)


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


class DatabaseUnavailableMiddleware:
    """A page whose database went out of reach (a restart, a failover, a terminated connection)
    answers 503 with ``Retry-After``, saying so, rather than a server error: nothing of it was
    stored and a reload will do. The API says the same in JSON (``raterapp.api.errors``)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, DATABASE_OUT_OF_REACH):
            return None
        logger.warning("%s: the database is out of reach: %s: %s", request.path, type(exception).__name__, exception)
        response = HttpResponse(
            "The database is out of reach for a moment: nothing was stored. Reload the page in a few seconds.",
            status=503,
            content_type="text/plain; charset=utf-8",
        )
        response["Retry-After"] = "5"
        return response
