"""The cache of the web and the worker: Django's Redis cache, failing soft.

What the ``default`` cache holds can be lost: API throttle counts, sign-in failure counts. While
Redis is away, a read misses and a write is dropped (with a warning),
so pages and the API go on (throttles and the sign-in lockout are not enforced meanwhile) instead
of answering 500. The debounce keys of background work use the strict ``debounce`` cache
(settings.CACHES): the transactional outbox must see that scheduling failed, to try again later.

Both take their connections from :class:`SharedConnectionPool`, through one client per pool
(:class:`SharedRedisCache`).
"""

from __future__ import annotations

import logging
import threading

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis import ConnectionPool, RedisError

logger = logging.getLogger(__name__)


class SharedConnectionPool(ConnectionPool):
    """One pool per process and address. Django makes a cache object, and so a pool, per thread,
    which under ASGI is per request: each request opened its own Redis connections (a TCP
    handshake and a CLIENT SETINFO each) and dropped them. redis-py's pools are thread-safe and
    start afresh in a forked child."""

    _pools: dict[tuple, SharedConnectionPool] = {}
    _pools_lock = threading.Lock()  # not ConnectionPool's own _lock, each pool's

    @classmethod
    def from_url(cls, url: str, **kwargs) -> SharedConnectionPool:
        key = (url, tuple(sorted((name, repr(value)) for name, value in kwargs.items())))
        with cls._pools_lock:
            if key not in cls._pools:
                cls._pools[key] = super().from_url(url, **kwargs)
            return cls._pools[key]


class _SharedClientCacheClient(RedisCacheClient):
    """Django's client builds a ``redis.Redis`` (with its two hundred response callbacks) for
    every operation, a tenth of a millisecond each, twice or more per API request (throttle,
    debounce). A ``redis.Redis`` holds no connection of its own and is thread-safe, so each pool
    keeps one."""

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # Django's, not in its stubs
        client = getattr(pool, "_raterapp_client", None)
        if client is None:
            client = pool._raterapp_client = self._client(connection_pool=pool)  # type: ignore[attr-defined]  # ditto
        return client


class SharedRedisCache(RedisCache):
    """Django's Redis cache, one client per connection pool."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _SharedClientCacheClient


class FailSoftRedisCache(SharedRedisCache):
    def _soft(self, operation: str, fallback, call, *args, **kwargs):
        try:
            return call(*args, **kwargs)
        except RedisError as exc:
            logger.warning("cache %s skipped, Redis unavailable: %s", operation, exc)
            return fallback

    def get(self, key, default=None, version=None):
        return self._soft("get", default, super().get, key, default, version)

    def get_many(self, keys, version=None):
        return self._soft("get_many", {}, super().get_many, keys, version)

    def has_key(self, key, version=None):
        return self._soft("has_key", False, super().has_key, key, version)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._soft("add", False, super().add, key, value, timeout, version)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._soft("set", None, super().set, key, value, timeout, version)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._soft("set_many", list(data), super().set_many, data, timeout, version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._soft("touch", False, super().touch, key, timeout, version)

    def incr(self, key, delta=1, version=None):
        return self._soft("incr", delta, super().incr, key, delta, version)

    def delete(self, key, version=None):
        return self._soft("delete", False, super().delete, key, version)

    def delete_many(self, keys, version=None):
        return self._soft("delete_many", None, super().delete_many, keys, version)
