"""The live streams of one experiment share one Redis subscription per process
(raterapp/api/live_hub.py): one connection however many pages watch it, every page told of each
message, the connection closed with the last stream, and every stream ended with ``unavailable``
when Redis fails under them or never answers. Each test has a redis-server of its own, so that
``CLIENT LIST`` counts the streams' connections and nothing else."""

import asyncio
import gc
import logging
import subprocess

import pytest
import redis
from asgiref.sync import async_to_sync, sync_to_async

from raterapp.api import live_hub
from raterapp.api.events import UNAVAILABLE, dashboard_events
from raterapp.services.refresh.live import experiment_channel
from tests.deploy.processes import free_port, redis_started, wait_until
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

PAGES = 5


class OwnRedis:
    """A redis-server of the test's own, which the test may kill and start again on its port."""

    def __init__(self, logs):
        self.logs, self.port = logs, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.server: subprocess.Popen | None = None

    def start(self):
        self.server = redis_started(self.port, self.logs)
        gc.collect()  # redis_started's client, so that the count starts at 0
        wait_until(lambda: self.connections() == 0, timeout=5, what="no client of the new redis-server")

    def kill(self):
        self.server.kill()
        self.server.wait()

    def connections(self) -> int:
        """Its clients, but for the one asking."""
        with redis.Redis.from_url(self.url) as client:
            return len(client.client_list()) - 1

    def publish(self, channel: str) -> None:
        with redis.Redis.from_url(self.url) as client:
            client.publish(channel, "{}")


@pytest.fixture
def own_redis(tmp_path, settings):
    server = OwnRedis(tmp_path)
    server.start()
    settings.REDIS_URL = server.url
    yield server
    server.kill()


@pytest.fixture
def watched(transactional_db, settings):
    """Two experiments of one engineer; heartbeats far apart, so that only a message wakes a stream."""
    settings.EVENTS_HEARTBEAT_SECONDS = 30
    settings.EVENTS_LIFETIME_SECONDS = 60
    owner = UserFactory(roles=["engineer"])
    return owner, experiment_prepared(owner=owner), experiment_prepared(owner=owner, name="other")


async def opened(user, experiment):
    """A stream past its ``retry`` line (subscribed) and its first ``dashboard`` event."""
    events = dashboard_events(user_id=user.pk, experiment_id=experiment.pk, cursor=None)
    assert (await anext(events)).startswith("retry: ")
    assert (await anext(events)).startswith("event: dashboard\n")
    return events


def run(body, timeout=20):
    async_to_sync(asyncio.wait_for)(body(), timeout)


@sync_to_async
def dashboard_edited(experiment):
    """A change of the dashboard that nothing publishes: only a message makes the streams see it."""
    experiment.target_half_width += 0.001
    experiment.save()


def test_the_streams_of_an_experiment_share_one_connection(watched, own_redis):
    owner, first, second = watched

    async def body():
        streams = list(await asyncio.gather(*(opened(owner, first) for _ in range(PAGES))))
        assert own_redis.connections() == 1
        streams += [await opened(owner, second) for _ in range(2)]
        assert own_redis.connections() == 2
        for events in streams:
            await events.aclose()

    run(body)


def test_a_message_reaches_every_stream_of_the_experiment(watched, own_redis):
    owner, experiment, _ = watched

    async def body():
        streams = [await opened(owner, experiment) for _ in range(PAGES)]
        await dashboard_edited(experiment)
        own_redis.publish(experiment_channel(experiment.pk))
        texts = await asyncio.wait_for(asyncio.gather(*(anext(events) for events in streams)), 5)
        assert [text.split("\n", 1)[0] for text in texts] == ["event: dashboard"] * PAGES
        for events in streams:
            await events.aclose()

    run(body)


def test_the_connection_closes_with_the_last_stream_and_not_before(watched, own_redis):
    owner, experiment, _ = watched

    async def body():
        streams = [await opened(owner, experiment) for _ in range(PAGES)]
        for events in streams[:-1]:
            await events.aclose()
        assert own_redis.connections() == 1
        await dashboard_edited(experiment)
        own_redis.publish(experiment_channel(experiment.pk))
        assert (await asyncio.wait_for(anext(streams[-1]), 5)).startswith("event: dashboard\n")
        await streams[-1].aclose()
        assert own_redis.connections() == 0

    run(body)


def test_when_redis_fails_every_stream_ends_unavailable_and_a_new_one_streams_once_it_is_back(
    watched, own_redis, caplog
):
    owner, experiment, _ = watched

    async def rest(events):
        return [text async for text in events]  # an exception that escaped would fail the test

    async def body():
        streams = [await opened(owner, experiment) for _ in range(PAGES)]
        endings = [asyncio.create_task(rest(events)) for events in streams]
        await asyncio.sleep(0.1)  # each waits on the subscription
        await asyncio.to_thread(own_redis.kill)
        assert await asyncio.wait_for(asyncio.gather(*endings), 5) == [[UNAVAILABLE]] * PAGES
        # The failed subscription is forgotten: the next stream tries afresh, and fails at once.
        after = dashboard_events(user_id=owner.pk, experiment_id=experiment.pk, cursor=None)
        assert await asyncio.wait_for(rest(after), 2) == [UNAVAILABLE]
        await asyncio.to_thread(own_redis.start)
        events = await opened(owner, experiment)
        assert own_redis.connections() == 1
        await events.aclose()

    run(body)
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []


def test_a_redis_that_never_answers_ends_the_stream_unavailable(settings, monkeypatch):
    """A hung Redis (or a full network queue) must not hold a stream before its first heartbeat."""
    monkeypatch.setattr(live_hub, "SUBSCRIBE_TIMEOUT_SECONDS", 0.5)
    accepted = []

    async def body():
        silent = await asyncio.start_server(lambda reader, writer: accepted.append(writer), "127.0.0.1", 0)
        settings.REDIS_URL = f"redis://127.0.0.1:{silent.sockets[0].getsockname()[1]}/0"
        events = dashboard_events(user_id=1, experiment_id=1, cursor=None)
        assert [text async for text in events] == [UNAVAILABLE]
        assert len(accepted) == 1
        silent.close()

    run(body, timeout=5)
