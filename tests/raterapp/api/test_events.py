"""The dashboard's live stream (server-sent events): who may open it, what each event carries
(the dashboard, and only the convergence points the page lacks), resuming with Last-Event-ID,
and events as the worker publishes, through Django's ASGI handler and the real Redis."""

import asyncio
import json
import uuid

import pytest
import redis
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.test import AsyncClient

from raterapp.api.events import EventStreamRenderer, dashboard_events
from raterapp.models import EstimateSnapshot
from raterapp.selectors.dashboard import dashboard_version_get, experiment_dashboard_get
from raterapp.selectors.dashboard_events import DashboardCursor, dashboard_event_get
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.derived import derived_refresh
from raterapp.services.refresh.estimates import estimates_refresh
from raterapp.services.refresh.live import experiment_channel
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

needs_redis = pytest.mark.skipif(not settings.REDIS_URL, reason="the stream needs Redis (REDIS_URL)")


def judge_one(experiment, rater):
    task = assignment_next(experiment=experiment, rater=rater)
    judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())


def test_a_cursor_reads_back_what_it_writes_and_nothing_else():
    cursor = DashboardCursor(41, "41-7-3c-1700000000.123456")
    assert str(cursor) == "41/41-7-3c-1700000000.123456"
    assert DashboardCursor.parse(str(cursor)) == cursor
    for text in ("", "41", "41/", "x/1-2", "-1/v", "1/" + "v" * 300):
        assert DashboardCursor.parse(text) is None


# ---- what an event carries ---------------------------------------------------------------


@pytest.fixture
def rated(people):
    """The owner's experiment with three snapshots, and a rater to add verdicts."""
    experiment = experiment_prepared(owner=people["owner"])
    for _ in range(3):
        judge_one(experiment, people["rater"])
        estimates_refresh(experiment_id=experiment.pk)
    return experiment


def snapshot_ids(experiment):
    return list(EstimateSnapshot.objects.filter(experiment=experiment).order_by("pk").values_list("pk", flat=True))


def test_without_a_cursor_the_event_has_the_whole_dashboard_and_history(rated):
    payload, cursor = dashboard_event_get(experiment=rated, cursor=None)
    ids = snapshot_ids(rated)
    assert payload["dashboard"] == experiment_dashboard_get(experiment=rated)
    assert payload["convergence"]["reset"] is True
    assert [point["snapshot"] for point in payload["convergence"]["points"]] == ids
    assert cursor == DashboardCursor(ids[-1], dashboard_version_get(experiment=rated))


def test_a_current_page_gets_no_event(rated):
    _, cursor = dashboard_event_get(experiment=rated, cursor=None)
    assert dashboard_event_get(experiment=rated, cursor=cursor) == (None, cursor)


def test_after_a_new_snapshot_only_its_point_is_sent(rated, people):
    _, cursor = dashboard_event_get(experiment=rated, cursor=None)
    judge_one(rated, people["rater"])
    new = estimates_refresh(experiment_id=rated.pk)
    payload, after = dashboard_event_get(experiment=rated, cursor=cursor)
    assert payload["convergence"]["reset"] is False
    assert [point["snapshot"] for point in payload["convergence"]["points"]] == [new.pk]
    assert payload["convergence"]["points"][0]["judgements"] == 4
    assert payload["dashboard"]["snapshot"]["id"] == new.pk
    assert after == DashboardCursor(new.pk, dashboard_version_get(experiment=rated))


def test_a_change_without_a_snapshot_sends_the_dashboard_and_no_point(rated):
    _, cursor = dashboard_event_get(experiment=rated, cursor=None)
    rated.target_half_width = 0.011
    rated.save()
    payload, after = dashboard_event_get(experiment=rated, cursor=cursor)
    assert payload["dashboard"]["experiment"]["target_half_width"] == 0.011
    assert payload["convergence"]["points"] == []
    assert after.snapshot == cursor.snapshot and after.version != cursor.version


def test_an_old_cursor_gets_the_points_after_it(rated):
    ids = snapshot_ids(rated)
    payload, _ = dashboard_event_get(experiment=rated, cursor=DashboardCursor(ids[0], "stale"))
    assert [point["snapshot"] for point in payload["convergence"]["points"]] == ids[1:]
    assert payload["convergence"]["reset"] is False


# ---- through the ASGI handler -------------------------------------------------------------


@pytest.fixture
def live(transactional_db, settings):
    settings.EVENTS_HEARTBEAT_SECONDS = 0.2
    settings.EVENTS_LIFETIME_SECONDS = 20
    owner, other = UserFactory(roles=["engineer"]), UserFactory(roles=["engineer"])
    rater, admin = UserFactory(roles=["rater"]), UserFactory(roles=["admin"])
    experiment = experiment_prepared(owner=owner)
    judge_one(experiment, rater)
    estimates_refresh(experiment_id=experiment.pk)
    return {"experiment": experiment, "owner": owner, "other": other, "rater": rater, "admin": admin}


class Stream:
    """The events of an open stream, read one by one (comments skipped unless asked for)."""

    def __init__(self, response):
        self.chunks = aiter(response.streaming_content)
        self.buffer = ""

    async def next_block(self, timeout=5.0):
        while "\n\n" not in self.buffer:
            chunk = await asyncio.wait_for(anext(self.chunks), timeout)
            self.buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        block, self.buffer = self.buffer.split("\n\n", 1)
        return block

    async def next_event(self, timeout=5.0):
        while True:
            block = await self.next_block(timeout)
            if block.startswith("event:"):
                fields = dict(line.split(": ", 1) for line in block.splitlines())
                return fields["id"], json.loads(fields["data"])

    async def close(self):
        await self.chunks.aclose()


async def open_stream(user, experiment, last_event_id=None, accept="text/event-stream"):
    client = AsyncClient()
    if user is not None:
        await sync_to_async(client.force_login)(user)
    headers = {"Accept": accept}
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    return await client.get(f"/api/experiments/{experiment.pk}/events/", headers=headers)


@needs_redis
@pytest.mark.parametrize("role, status", [("anonymous", 401), ("rater", 403), ("other", 404)])
def test_the_stream_is_refused_like_the_dashboard(live, role, status):
    async def body():
        response = await open_stream(live.get(role), live["experiment"])
        assert response.status_code == status
        assert not response.streaming

    async_to_sync(body)()


@needs_redis
def test_events_follow_each_published_snapshot_with_only_the_new_points(live):
    experiment = live["experiment"]

    async def body():
        response = await open_stream(live["owner"], experiment)
        assert response.status_code == 200
        assert response["Content-Type"] == "text/event-stream"
        stream = Stream(response)
        assert (await stream.next_block()).startswith("retry: ")
        first_id, first = await stream.next_event()
        assert first["convergence"]["reset"] is True
        assert len(first["convergence"]["points"]) == 1
        assert first["dashboard"]["progress"]["verdicts"] == 1
        for verdicts in (2, 3):
            await sync_to_async(judge_one)(experiment, live["rater"])
            # The worker's path: stored, then published on commit (autocommit here).
            snapshot = await sync_to_async(estimates_refresh)(experiment_id=experiment.pk)
            event_id, event = await stream.next_event()
            assert event["convergence"]["reset"] is False
            assert [p["snapshot"] for p in event["convergence"]["points"]] == [snapshot.pk]
            assert event["dashboard"]["snapshot"] == {**event["dashboard"]["snapshot"], "id": snapshot.pk}
            assert event["dashboard"]["progress"]["verdicts"] == verdicts
            assert event_id.startswith(f"{snapshot.pk}/") and event_id != first_id
        await stream.close()

    async_to_sync(body)()


@needs_redis
def test_a_user_s_streams_are_capped_and_one_more_is_told_to_poll(live, settings):
    """One engineer once opened 200 streams, none refused, each holding a Redis connection."""
    settings.EVENTS_STREAMS_PER_USER = 2
    owner, admin, experiment = live["owner"].pk, live["admin"].pk, live["experiment"].pk
    channel = experiment_channel(experiment)

    async def body():
        def stream(user):
            return dashboard_events(user_id=user, experiment_id=experiment, cursor=None)

        opened = [stream(owner), stream(owner)]
        for events in opened:
            assert (await anext(events)).startswith("retry:")
        refused = stream(owner)
        assert await anext(refused) == 'event: unavailable\ndata: {"reason": "too_many_streams"}\n\n'
        assert [text async for text in refused] == []  # and it ends
        other = stream(admin)  # another user is not held up
        assert (await anext(other)).startswith("retry:")
        subscribers = lambda: redis.Redis.from_url(settings.REDIS_URL).pubsub_numsub(channel)[0][1]  # noqa: E731
        assert await sync_to_async(subscribers)() == 1  # the experiment's streams share it (live_hub)
        await opened[0].aclose()  # a page closed (the server cancels its stream): room again
        assert await sync_to_async(subscribers)() == 1  # the others still listen
        again = stream(owner)
        assert (await anext(again)).startswith("retry:")
        for events in (opened[1], other, again):
            await events.aclose()

    async_to_sync(body)()


@needs_redis
def test_an_idle_stream_sends_heartbeats_and_no_event(live):
    async def body():
        response = await open_stream(live["admin"], live["experiment"])
        stream = Stream(response)
        await stream.next_event()
        blocks = [await stream.next_block() for _ in range(3)]
        assert blocks == [": heartbeat"] * 3
        await stream.close()

    async_to_sync(body)()


@needs_redis
def test_a_page_that_reconnects_gets_only_what_it_missed(live):
    experiment = live["experiment"]

    async def body():
        stream = Stream(await open_stream(live["owner"], experiment))
        last_id, _ = await stream.next_event()
        await stream.close()
        # Nothing changed: the reconnected page gets no event, only heartbeats.
        stream = Stream(await open_stream(live["owner"], experiment, last_event_id=last_id))
        assert (await stream.next_block()).startswith("retry: ")
        assert await stream.next_block() == ": heartbeat"
        await stream.close()
        # Two snapshots while it was away: both points, appended.
        missed = []
        for _ in range(2):
            await sync_to_async(judge_one)(experiment, live["rater"])
            missed.append((await sync_to_async(estimates_refresh)(experiment_id=experiment.pk)).pk)
        stream = Stream(await open_stream(live["owner"], experiment, last_event_id=last_id))
        _, event = await stream.next_event()
        assert event["convergence"]["reset"] is False
        assert [p["snapshot"] for p in event["convergence"]["points"]] == missed
        await stream.close()

    async_to_sync(body)()


@needs_redis
def test_the_stream_ends_after_its_lifetime(live, settings):
    settings.EVENTS_LIFETIME_SECONDS = 0.5

    async def body():
        response = await open_stream(live["owner"], live["experiment"])
        blocks = []
        async for chunk in response.streaming_content:
            blocks.append(chunk.decode() if isinstance(chunk, bytes) else chunk)
        text = "".join(blocks)
        assert text.startswith("retry: ") and text.count("event: dashboard") == 1

    async_to_sync(asyncio.wait_for)(body(), 5)


def test_outside_asgi_the_stream_answers_204_so_the_page_polls(client_of, experiment):
    response = client_of("owner").get(f"/api/experiments/{experiment.pk}/events/", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 204 and not response.streaming


@pytest.mark.parametrize("redis_url", ["", settings.REDIS_URL])
def test_without_redis_the_stream_answers_204_even_under_asgi(live, settings, redis_url):
    settings.REDIS_URL = redis_url

    async def body():
        response = await open_stream(live["owner"], live["experiment"])
        assert (response.status_code, response.streaming) == ((204, False) if not redis_url else (200, True))
        if response.streaming:
            await Stream(response).close()

    async_to_sync(body)()


def test_the_204_has_no_body_when_events_were_asked_for():
    """A 204 with a body breaks HTTP/1.1's framing (uvicorn logged "Too much data for declared
    Content-Length" for each page of the embedded demo); Django's test client drops a 204's body,
    so the renderer is asked directly."""
    assert EventStreamRenderer().render(None, "text/event-stream") == b""
    assert EventStreamRenderer().render({"detail": "No."}, "text/event-stream") == b'{"detail": "No."}'


@needs_redis
def test_a_client_that_does_not_ask_for_events_gets_204_under_asgi(live):
    async def body():
        response = await open_stream(live["owner"], live["experiment"], accept="application/json")
        assert (response.status_code, response.streaming) == (204, False)

    async_to_sync(body)()


@needs_redis
@pytest.mark.parametrize("revoke", ["grant withdrawn", "engineer role removed", "user deactivated"])
def test_a_stream_ends_when_its_user_may_no_longer_read_the_experiment(live, revoke):
    experiment, other = live["experiment"], live["other"]
    experiment.shared_with.add(other)

    def withdraw():
        if revoke == "grant withdrawn":
            experiment.shared_with.remove(other)
        elif revoke == "engineer role removed":
            other.groups.clear()
        else:
            other.is_active = False
            other.save()

    async def body():
        response = await open_stream(other, experiment)
        stream = Stream(response)
        await stream.next_event()
        await sync_to_async(withdraw)()
        rest = []
        async for chunk in stream.chunks:  # ends at the next heartbeat's check, long before the lifetime
            rest.append(chunk.decode() if isinstance(chunk, bytes) else chunk)
        assert "event:" not in "".join(rest)

    async_to_sync(asyncio.wait_for)(body(), 5)


@needs_redis
def test_new_derived_metrics_are_announced_on_the_experiments_channel(rated, django_capture_on_commit_callbacks):
    import redis

    pubsub = redis.Redis.from_url(settings.REDIS_URL).pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(experiment_channel(rated.pk))
    pubsub.get_message(timeout=1)
    with django_capture_on_commit_callbacks(execute=True):
        derived = derived_refresh(experiment_id=rated.pk)
    message = pubsub.get_message(timeout=5)
    pubsub.close()
    assert json.loads(message["data"]) == {"derived": derived.pk, "experiment": rated.pk}
