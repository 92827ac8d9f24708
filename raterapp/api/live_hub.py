"""One Redis subscription per experiment and process, shared by the experiment's live streams
(:mod:`raterapp.api.events`).

The first stream of an experiment in this process opens a Redis connection subscribed to the
experiment's channel (:func:`raterapp.services.refresh.live.experiment_channel`), and a task that reads it;
the experiment's other streams wait on that task. Each message wakes every stream once (a burst
while a stream re-reads wakes it once more, not once per message). When the last stream leaves,
the task is cancelled and the connection closed. When Redis fails, the connection is closed, every
stream of the experiment is told (:class:`SubscriptionLost`), and the subscription is forgotten, so
the next stream opens a new one (and fails at once while Redis is down).

One event loop per process, so plain asyncio and no lock: nothing here awaits between a look-up of
the subscriptions and its change.
"""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings

from raterapp.services.refresh.live import experiment_channel

logger = logging.getLogger(__name__)

# Redis refusing connections fails at once; an unreachable or hung one would hold the streams
# until this (connecting, and the subscription's confirmation).
SUBSCRIBE_TIMEOUT_SECONDS = 5.0


class SubscriptionLost(Exception):
    """The experiment's subscription failed (Redis down, or the connection lost)."""


class ExperimentChanges:
    """One stream's share of its experiment's subscription: ``async with
    ExperimentChanges(experiment_id=7) as changes`` is subscribed once it enters, so a message
    published after that reaches it, and raises :class:`SubscriptionLost` when Redis cannot be
    reached. A class, not a generator: the loop closes its open async generators all at once when
    it ends, and one closed both by the loop and by the stream that holds it raises."""

    def __init__(self, *, experiment_id: int) -> None:
        self.experiment_id = experiment_id
        self._changed = asyncio.Event()
        self._lost: BaseException | None = None
        self._subscription: _Subscription | None = None

    async def __aenter__(self) -> ExperimentChanges:
        self._subscription = _subscription_for(self.experiment_id)
        self._subscription.listeners.add(self)
        try:
            async with asyncio.timeout(SUBSCRIBE_TIMEOUT_SECONDS):
                await self._subscription.settled.wait()
            self._raise_if_lost()
        except BaseException:
            await _leave(self._subscription, self)
            raise
        return self

    async def __aexit__(self, *exc_info) -> None:
        assert self._subscription is not None, "entered"
        await _leave(self._subscription, self)

    async def changed(self, *, within: float) -> bool:
        """Whether a message came on the channel since the last call, waiting at most ``within``
        seconds for one. Raises :class:`SubscriptionLost` once the subscription failed."""
        try:
            async with asyncio.timeout(within):
                await self._changed.wait()
        except TimeoutError:
            return False
        self._raise_if_lost()
        self._changed.clear()
        return True

    def notify(self) -> None:
        self._changed.set()

    def fail(self, error: BaseException) -> None:
        self._lost = error
        self._changed.set()

    def _raise_if_lost(self) -> None:
        if self._lost is not None:
            raise SubscriptionLost(f"{type(self._lost).__name__}: {self._lost}") from self._lost


class _Subscription:
    """An experiment's connection, its reader task and the streams that wait on it."""

    def __init__(self, experiment_id: int) -> None:
        self.experiment_id = experiment_id
        self.loop = asyncio.get_running_loop()
        self.listeners: set[ExperimentChanges] = set()
        self.settled = asyncio.Event()  # subscribed, or failed
        self.reading = True  # while true, cancelling the reader interrupts only the reading
        self.reader = asyncio.create_task(_read(self), name=f"live subscription of experiment {experiment_id}")

    def notify(self) -> None:
        for listener in self.listeners:
            listener.notify()

    def fail(self, error: BaseException) -> None:
        for listener in self.listeners:
            listener.fail(error)
        self.settled.set()


_subscriptions: dict[int, _Subscription] = {}


def _subscription_for(experiment_id: int) -> _Subscription:
    subscription = _subscriptions.get(experiment_id)
    # Tests run one event loop after another in one process; a task of an ended loop never reads.
    if subscription is None or subscription.loop is not asyncio.get_running_loop():
        subscription = _subscriptions[experiment_id] = _Subscription(experiment_id)
    return subscription


async def _leave(subscription: _Subscription, listener: ExperimentChanges) -> None:
    subscription.listeners.discard(listener)
    if subscription.listeners:
        return
    _forget(subscription)
    if subscription.reading:
        subscription.reader.cancel()
    await asyncio.wait([subscription.reader])  # the connection is closed when the stream ends


def _forget(subscription: _Subscription) -> None:
    if _subscriptions.get(subscription.experiment_id) is subscription:
        del _subscriptions[subscription.experiment_id]


async def _read(subscription: _Subscription) -> None:
    """The subscription's task: subscribe, wake the listeners at each message; on failure, close
    the connection before telling them, so that none is left open however they leave."""
    import redis.asyncio as redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=SUBSCRIBE_TIMEOUT_SECONDS)
    pubsub = client.pubsub()
    try:
        await _listen(pubsub, subscription)
    except Exception as error:  # noqa: BLE001 - any failure ends the experiment's streams
        failure = error
    finally:
        subscription.reading = False
        _forget(subscription)
        await _closed(pubsub, client, subscription.experiment_id)
    logger.warning(
        "live subscription of experiment %s failed: %s: %s", subscription.experiment_id, type(failure).__name__, failure
    )
    subscription.fail(failure)


async def _listen(pubsub, subscription: _Subscription) -> None:
    """Wake the listeners at each message; returns only by raising (or when cancelled)."""
    await pubsub.subscribe(experiment_channel(subscription.experiment_id))
    async for message in pubsub.listen():
        if message["type"] == "subscribe":
            subscription.settled.set()
        elif message["type"] == "message":
            subscription.notify()
    raise SubscriptionLost("no longer subscribed")


async def _closed(pubsub, client, experiment_id: int) -> None:
    try:
        await pubsub.aclose()
        await client.aclose()
    except Exception as error:  # noqa: BLE001 - a dead connection closes with an error
        logger.warning("live subscription of experiment %s: closing Redis: %s", experiment_id, error)
