"""The experiment page's live updates as server-sent events (``text/event-stream``).

``GET /api/experiments/<id>/events/``. Roles and answers as ``dashboard/`` (the same permission
and access check): engineers read the experiments they own or were granted, admins all; raters
403, anonymous users 401; an experiment that is not visible 404. Without Redis (the embedded demo),
outside the ASGI server, or to a client that does not accept ``text/event-stream``, the answer is
204 at once, which tells a browser's EventSource not to reconnect (the SSE standard), and the
page polls ``dashboard/`` instead.

The stream subscribes to the experiment's channel (:mod:`raterapp.services.refresh.live`) before it reads
anything, then sends a ``dashboard`` event whenever the dashboard's version changed: at the start,
after each message on the channel, and at each heartbeat (edits and batches publish nothing).
The streams of one experiment in one process share one Redis connection and its subscription
(:mod:`raterapp.api.live_hub`); each stream keeps its own heartbeats, lifetime and reads.
Its data is ``{"dashboard": <dashboard/'s JSON>, "convergence": {"metrics", "points", "reset"}}``:
the convergence points are only the snapshots the page has not had yet (``reset`` true: the
whole history, thinned). Its id (``<last snapshot sent>/<version>``) comes back as
``Last-Event-ID`` when the browser reconnects, and the stream then sends only what is newer.
Between events, a comment every ``EVENTS_HEARTBEAT_SECONDS`` keeps proxies from closing it; it
ends after ``EVENTS_LIFETIME_SECONDS`` and the browser reconnects.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from contextlib import aclosing
from types import SimpleNamespace

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections, connection
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from raterapp.access import access_experiment_for_engineer
from raterapp.selectors.dashboard_events import DashboardCursor, dashboard_event_get

from .common import EXPERIMENT_NOT_FOUND, IsEngineerOrAdmin
from .live_hub import ExperimentChanges

logger = logging.getLogger(__name__)

# How long the browser waits before it reconnects after the stream ended (ms).
RECONNECT_MS = 2000
# Sent when the stream fails (Redis or the database down) or is one too many: the page polls
# dashboard/ instead.
UNAVAILABLE = "event: unavailable\ndata: {}\n\n"
TOO_MANY = 'event: unavailable\ndata: {"reason": "too_many_streams"}\n\n'
# The streams open in this process, by user: each re-reads the dashboard at every change and
# heartbeat, so one user's tabs (or a script) must not take the process. One event loop per
# process: no lock needed.
_open_streams: Counter[int] = Counter()


class EventStreamRenderer(BaseRenderer):
    """Lets DRF answer ``Accept: text/event-stream`` (the refusals are JSON all the same)."""

    media_type = "text/event-stream"
    format = "event-stream"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        # A 204 has no body: "null" there breaks the HTTP/1.1 framing (uvicorn logged an error).
        return b"" if data is None else json.dumps(data).encode()


class ExperimentEventsApi(APIView):
    """The experiment page's live updates (server-sent events): a ``dashboard`` event with
    dashboard/'s JSON and the new convergence points whenever the dashboard changed.
    ``Last-Event-ID`` resumes. 204 without Redis, outside ASGI or without ``Accept: text/event-stream``:
    poll dashboard/.
    Roles: engineer (own or granted), admin."""

    permission_classes = [IsEngineerOrAdmin]
    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @extend_schema(
        responses={
            (200, "text/event-stream"): OpenApiTypes.STR,
            404: EXPERIMENT_NOT_FOUND,
            204: OpenApiResponse(description="No stream (no Redis, not under ASGI, not asked for): poll dashboard/."),
        }
    )
    def get(self, request, experiment_id: int):
        experiment = access_experiment_for_engineer(request.user, experiment_id)
        streaming = request.accepted_renderer.media_type == EventStreamRenderer.media_type
        if not (streaming and settings.REDIS_URL and isinstance(request._request, ASGIRequest)):
            return Response(status=status.HTTP_204_NO_CONTENT)
        cursor = DashboardCursor.parse(request.headers.get("Last-Event-ID", ""))
        events = dashboard_events(user_id=request.user.pk, experiment_id=experiment.pk, cursor=cursor)
        response = StreamingHttpResponse(events, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
        # Back to the pool now, not when the stream ends: the stream lasts minutes and reads
        # with connections of its own (_event_since).
        connection.close()
        return response


async def dashboard_events(*, user_id: int, experiment_id: int, cursor: DashboardCursor | None):
    """The stream's text: events as the dashboard changes, heartbeats between, for a bounded time.
    It ends early when the user may no longer read the experiment (access is checked at each read),
    and with an ``unavailable`` event when Redis or the database fails, or at once when the user
    has ``EVENTS_STREAMS_PER_USER`` streams open in this process (or the process
    ``EVENTS_STREAMS_PER_PROCESS``)."""
    if (
        _open_streams[user_id] >= settings.EVENTS_STREAMS_PER_USER
        or _open_streams.total() >= settings.EVENTS_STREAMS_PER_PROCESS
    ):
        logger.warning("live stream of experiment %s refused: user %s has too many open", experiment_id, user_id)
        yield TOO_MANY
        return
    _open_streams[user_id] += 1
    try:
        async with aclosing(_listening_stream(user_id=user_id, experiment_id=experiment_id, cursor=cursor)) as events:
            async for text in events:
                yield text
    finally:
        _open_streams[user_id] -= 1
        if _open_streams[user_id] <= 0:
            del _open_streams[user_id]


async def _listening_stream(*, user_id: int, experiment_id: int, cursor: DashboardCursor | None):
    """The stream on its experiment's shared subscription. Nothing escapes it: an exception out of
    a streamed body skips the end of the request (Django's ``request_finished``) and with it the
    return of the request's database connection to the pool."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.EVENTS_LIFETIME_SECONDS
    try:
        async with ExperimentChanges(experiment_id=experiment_id) as changes:
            async for text in _stream(changes, loop, deadline, user_id, experiment_id, cursor):
                yield text
    except Exception as error:  # noqa: BLE001 - any failure ends the stream, the page polls
        logger.warning("live stream of experiment %s ended: %s: %s", experiment_id, type(error).__name__, error)
        yield UNAVAILABLE


async def _stream(
    changes: ExperimentChanges, loop, deadline: float, user_id: int, experiment_id: int, cursor: DashboardCursor | None
):
    """:func:`dashboard_events`' events and heartbeats, which may raise."""
    yield f"retry: {RECONNECT_MS}\n\n"
    while True:
        allowed, event, cursor = await _event_since(user_id, experiment_id, cursor)
        if not allowed:
            return
        if event is not None:
            yield event
        remaining = deadline - loop.time()
        if remaining <= 0:
            return
        if not await changes.changed(within=min(settings.EVENTS_HEARTBEAT_SECONDS, remaining)):
            yield ": heartbeat\n\n"


@sync_to_async
def _event_since(user_id: int, experiment_id: int, cursor: DashboardCursor | None):
    """(whether the user may still read the experiment, the event's text or None, the new cursor)."""
    try:
        user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
        if user is None or not IsEngineerOrAdmin().has_permission(SimpleNamespace(user=user), None):
            return False, None, cursor
        try:
            experiment = access_experiment_for_engineer(user, experiment_id)
        except Http404:
            return False, None, cursor
        payload, cursor = dashboard_event_get(experiment=experiment, cursor=cursor)
    finally:
        # The stream holds no connection between events (returned to the pool under ASGI).
        close_old_connections()
    if payload is None:
        return True, None, cursor
    return True, f"event: dashboard\nid: {cursor}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n", cursor
