"""The anonymous API rate (of what anonymous callers may reach: the API docs and schema; the
health check has none) is kept per caller address, and a client cannot escape it by sending a
new X-Forwarded-For each time; behind the proxy (API_NUM_PROXIES=1) callers are told apart by the
address the proxy saw."""

import uuid

import pytest
from rest_framework.settings import api_settings
from rest_framework.test import APIClient
from rest_framework.throttling import AnonRateThrottle


@pytest.fixture
def three_a_minute(db):
    original = AnonRateThrottle.THROTTLE_RATES
    AnonRateThrottle.THROTTLE_RATES = {**api_settings.DEFAULT_THROTTLE_RATES, "anon": "3/min"}
    yield
    AnonRateThrottle.THROTTLE_RATES = original  # the counts stay: every test's addresses are new


def address() -> str:
    n = uuid.uuid4().int
    return f"10.{n % 250}.{n // 250 % 250}.{n // 62500 % 250 + 1}"


def statuses(n: int, *, remote: str, forwarded=lambda k: None) -> list[int]:
    client = APIClient()
    out = []
    for k in range(n):
        headers = {"X-Forwarded-For": forwarded(k)} if forwarded(k) else {}
        out.append(client.get("/api/docs/", REMOTE_ADDR=remote, headers=headers).status_code)
    return out


def test_a_new_x_forwarded_for_each_time_does_not_escape_the_rate(three_a_minute, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 0}
    assert statuses(5, remote=address(), forwarded=lambda k: f"203.0.113.{k}") == [200, 200, 200, 429, 429]


def test_behind_one_proxy_callers_are_told_apart_by_the_address_it_saw(three_a_minute, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    proxy, first, second = address(), address(), address()
    # A spoofed first hop changes nothing: the proxy appends the address it saw.
    assert statuses(4, remote=proxy, forwarded=lambda k: f"198.51.100.{k}, {first}") == [200, 200, 200, 429]
    assert statuses(1, remote=proxy, forwarded=lambda k: second) == [200]


def test_the_default_follows_https(tmp_path):
    from tests.raterapp.helpers.settings import settings_loaded

    for environment, proxies in (({}, 0), ({"HTTPS": "true"}, 1), ({"HTTPS": "true", "API_NUM_PROXIES": "2"}, 2)):
        loaded = settings_loaded({"SECRET_KEY": "k", **environment}, "REST_FRAMEWORK", tmp_path=tmp_path)
        assert loaded["REST_FRAMEWORK"]["NUM_PROXIES"] == proxies
