"""The default cache fails soft while Redis is away; the debounce cache does not (the outbox must see it)."""

import pytest
import redis
from django.conf import settings as django_settings

from raterapp.cache import FailSoftRedisCache, SharedRedisCache

# Nothing listens here (the process-level tests of this branch use 17100-17189).
DEAD_REDIS = "redis://127.0.0.1:17199/0"


def test_every_operation_on_a_redis_that_is_away_answers_as_a_miss_or_a_dropped_write(caplog):
    cache = FailSoftRedisCache(DEAD_REDIS, {})
    assert cache.get("k") is None
    assert cache.get("k", "fallback") == "fallback"
    assert cache.get_many(["a", "b"]) == {}
    assert cache.has_key("k") is False
    assert cache.add("k", 1) is False
    assert cache.set("k", 1) is None
    assert cache.set_many({"a": 1, "b": 2}) == ["a", "b"]
    assert cache.touch("k") is False
    assert cache.incr("k", 3) == 3
    assert cache.delete("k") is False
    assert cache.delete_many(["a"]) is None
    assert len([r for r in caplog.records if "Redis unavailable" in r.getMessage()]) == 11


def test_the_strict_cache_raises(caplog):
    with pytest.raises(redis.exceptions.ConnectionError):
        SharedRedisCache(DEAD_REDIS, {}).add("k", 1)


def test_settings_give_the_two_caches(settings):
    assert set(settings.CACHES) == {"default", "debounce"}
    if settings.REDIS_URL:
        assert settings.CACHES["default"]["BACKEND"] == "raterapp.cache.FailSoftRedisCache"
        assert settings.CACHES["debounce"]["BACKEND"] == "raterapp.cache.SharedRedisCache"
        assert settings.CACHES["default"]["LOCATION"] == settings.CACHES["debounce"]["LOCATION"] == settings.REDIS_URL


# Without Redis the caches are a table (the embedded demo); CI has Redis, and fails a skipped test.
needs_redis = pytest.mark.skipif(not django_settings.REDIS_URL, reason="the Redis caches need REDIS_URL")


@needs_redis
def test_the_caches_of_every_thread_share_one_connection_pool_per_address(settings):
    """Django makes a cache object per thread, and under ASGI per request: without a shared pool
    each request opened (and dropped) its own Redis connections."""
    import threading

    from django.core.cache import caches

    pools, clients = {}, {}

    def use(name):
        cache = caches["default"]
        cache.set(f"pool-probe-{name}", name)
        pools[name] = (cache._cache._get_connection_pool(True), caches["debounce"]._cache._get_connection_pool(True))
        clients[name] = (cache._cache.get_client(write=True), caches["debounce"]._cache.get_client(write=True))

    threads = [threading.Thread(target=use, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    use("main")
    assert len({id(pair[0]) for pair in pools.values()}) == 1
    assert len({id(pair[1]) for pair in pools.values()}) == 1
    default, debounce = pools["main"]
    assert default.connection_kwargs == debounce.connection_kwargs  # same address and options
    # and one client each: Django built one for every operation
    assert len({id(client) for pair in clients.values() for client in pair}) == 1
    assert clients["main"][0].connection_pool is default
    assert [caches["default"].get(f"pool-probe-{name}") for name in (0, 1, 2, "main")] == [0, 1, 2, "main"]


@needs_redis
def test_a_fresh_cache_object_does_not_open_a_new_connection(settings):
    from django.core.cache.backends.redis import RedisCacheClient

    options = settings.CACHES["default"]["OPTIONS"]
    first = RedisCacheClient([settings.REDIS_URL], **options)
    first.set("pool-probe", 1, None)
    opened = first._get_connection_pool(True)._created_connections
    for _ in range(5):
        fresh = RedisCacheClient([settings.REDIS_URL], **options)
        assert fresh.get("pool-probe", None) == 1
    assert fresh._get_connection_pool(True) is first._get_connection_pool(True)
    assert first._get_connection_pool(True)._created_connections == opened
