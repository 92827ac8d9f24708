"""Per-endpoint rates (issue 33: one rater polling ``/api/raters/me/`` from 8 connections, far under
the per-user rate, slowed every other rater). A rater's polls (``rater_poll``: their standing and
progress) and the rating loop (``rating``: next-pair, verdicts, undo, reports, lease renewal) each
have a rate per user; past it that scope answers 429 with Retry-After while the others still
answer, and the pages' own polling, at the production rates, never meets them."""

import re
from pathlib import Path

import pytest
from django.core.cache import cache
from rest_framework.settings import api_settings
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle

from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.settings import env_example, settings_loaded
from tests.raterapp.prepared import experiment_of

JS = Path(__file__).resolve().parents[3] / "static" / "raterapp" / "js"
SCOPES = ("rater_poll", "rating", "user")
MINUTES = 3


class Clock:
    """The throttles' timer, moved by hand (an instance: a function would become a method)."""

    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


@pytest.fixture
def rater(db):
    user = UserFactory(roles=["rater"])
    keys = [f"throttle_{scope}_{user.pk}" for scope in SCOPES]
    cache.delete_many(keys)  # a count left by an earlier run of the suite under the same id
    yield user
    cache.delete_many(keys)


@pytest.fixture
def rates(monkeypatch):
    """``rates(rater_poll="3/min")``: these scopes' rates for the test; the others as the suite has them."""

    def set_rates(**scoped):
        monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {**api_settings.DEFAULT_THROTTLE_RATES, **scoped})

    return set_rates


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(SimpleRateThrottle, "timer", clock)
    return clock


def api_client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_past_its_rate_a_poll_answers_429_with_retry_after_while_the_loop_still_answers(rater, rates, clock):
    rates(rater_poll="3/min")
    experiment = experiment_of(4, UserFactory(roles=["engineer"]))
    client = api_client(rater)
    statuses = [client.get("/api/raters/me/").status_code for _ in range(3)]
    refused = client.get("/api/raters/me/")
    assert statuses == [200, 200, 200] and refused.status_code == 429
    assert refused["Content-Type"] == "application/json"
    assert refused.json() == {"detail": "Request was throttled. Expected available in 60 seconds."}
    assert refused["Retry-After"] == "60"
    # The progress shares the rater's poll rate; the rating loop has its own.
    assert client.get(f"/api/experiments/{experiment.pk}/progress/").status_code == 429
    assert client.post(f"/api/experiments/{experiment.pk}/next-pair/", {}, "json").status_code == 200
    assert api_client(UserFactory(roles=["rater"])).get("/api/raters/me/").status_code == 200  # per user
    clock.now += 20
    assert client.get("/api/raters/me/")["Retry-After"] == "40"
    clock.now += 40
    assert client.get("/api/raters/me/").status_code == 200


def test_past_its_rate_the_loop_answers_429_while_the_polls_still_answer(rater, rates, clock):
    rates(rating="2/min")
    experiment = experiment_of(4, UserFactory(roles=["engineer"]))
    client = api_client(rater)
    path = f"/api/experiments/{experiment.pk}/next-pair/"
    assert [client.post(path, {}, "json").status_code for _ in range(3)] == [200, 200, 429]
    assert client.post("/api/leases/renew/", {"tasks": []}, "json").status_code == 429
    assert client.get("/api/raters/me/").status_code == 200


def production_rates(tmp_path) -> dict[str, str]:
    loaded = settings_loaded({**env_example(), "SECRET_KEY": "k"}, "REST_FRAMEWORK", tmp_path=tmp_path)
    return loaded["REST_FRAMEWORK"]["DEFAULT_THROTTLE_RATES"]


def js_milliseconds(file: str, constant: str) -> list[int]:
    """The numbers in the line of the page's script that defines ``constant``."""
    (line,) = [line for line in (JS / file).read_text().splitlines() if line.startswith(f"const {constant} = ")]
    return [int(value) for value in re.findall(r"\b\d+\b", line)]


def test_the_pages_own_polling_stays_under_the_production_rates(rater, rates, clock, settings, tmp_path):
    """Three minutes of the pages' polls, as often as they ask: the home page in four visible tabs,
    and a judging page waiting on its end screen (the quickest recheck) while it renews its
    pairs' leases. A script's 8 connections at a few hundred requests a second meet them within
    a second."""
    production = production_rates(tmp_path)
    rates(**{scope: production[scope] for scope in ("rater_poll", "rating")})
    (home_ms,) = js_milliseconds("rate_home.js", "POLL_MS")
    recheck_ms = min(js_milliseconds("judging_aside.js", "RECHECK_MS"))
    renew_ms = max(5, settings.LEASE_SECONDS / 3) * 1000
    assert (home_ms, recheck_ms, renew_ms) == (4000, 2000, 40_000)  # what the pages do today
    experiment = experiment_of(4, UserFactory(roles=["engineer"]))
    client = api_client(rater)
    calls = [(t, "home") for t in range(0, MINUTES * 60_000, home_ms) for _ in range(4)]
    calls += [(t, "recheck") for t in range(0, MINUTES * 60_000, recheck_ms)]
    calls += [(t, "renew") for t in range(0, MINUTES * 60_000, int(renew_ms))]
    answers = set()
    for t, kind in sorted(calls):
        clock.now = 1_000_000.0 + t / 1000
        if kind == "home":
            response = client.get("/api/raters/me/")
        elif kind == "recheck":
            response = client.post(f"/api/experiments/{experiment.pk}/next-pair/", {"holding": []}, "json")
        else:
            response = client.post("/api/leases/renew/", {"tasks": []}, "json")
        answers.add((kind, response.status_code))
    assert answers == {("home", 200), ("recheck", 200), ("renew", 200)}
