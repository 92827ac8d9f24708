"""The default cache fails soft while Redis is away; the debounce cache does not (the outbox must see it)."""

import pytest
import redis
from django.core.cache.backends.redis import RedisCache

from raterapp.cache import FailSoftRedisCache

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
        RedisCache(DEAD_REDIS, {}).add("k", 1)


def test_settings_give_the_two_caches(settings):
    assert set(settings.CACHES) == {"default", "debounce"}
    if settings.REDIS_URL:
        assert settings.CACHES["default"]["BACKEND"] == "raterapp.cache.FailSoftRedisCache"
        assert settings.CACHES["debounce"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
        assert settings.CACHES["default"]["LOCATION"] == settings.CACHES["debounce"]["LOCATION"] == settings.REDIS_URL
