"""Issue 33: a web worker whose database pool stays exhausted ends (gunicorn starts another), and
the container's liveness check answers without the database and acts when it fails.

The decision is a pure function of the pool's sampled stats; the process-level test, where a
real gunicorn worker is starved and replaced, is tests/deploy/test_pool_watchdog.py."""

import asyncio
import http.server
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import pytest

from raterapp import web_worker
from raterapp.liveness import liveness_check
from raterapp.web_worker import PoolWatchdog, pool_exhausted, pool_restart_due, pool_starved_seconds

EXHAUSTED = {"pool_min": 1, "pool_max": 2, "pool_size": 2, "pool_available": 0, "requests_waiting": 3}
BUSY = {**EXHAUSTED, "requests_waiting": 0}  # every connection in use, nobody waiting
FREE = {**EXHAUSTED, "pool_available": 1, "requests_waiting": 0}
DATABASE_DOWN = {**EXHAUSTED, "pool_size": 0}  # its connections failed and were dropped


@pytest.mark.parametrize(
    "stats, exhausted",
    [(EXHAUSTED, True), (BUSY, False), (FREE, False), (DATABASE_DOWN, False), ({**EXHAUSTED, "pool_size": 1}, False)],
)
def test_a_pool_is_exhausted_when_every_connection_is_out_and_requests_wait(stats, exhausted):
    assert pool_exhausted(stats) is exhausted


def samples(*stats_every_2_s):
    return [(100.0 + 2 * k, stats) for k, stats in enumerate(stats_every_2_s)]


@pytest.mark.parametrize(
    "sampled, seconds, due",
    [
        (samples(EXHAUSTED), 0.0, False),  # one sample: exhausted for no time yet
        (samples(FREE, EXHAUSTED, EXHAUSTED, EXHAUSTED), 4.0, False),
        (samples(FREE, *[EXHAUSTED] * 16), 30.0, True),  # 16 samples 2 s apart: 30 s
        (samples(*[EXHAUSTED] * 10, BUSY, *[EXHAUSTED] * 10), 18.0, False),  # a break starts it over
        (samples(*[EXHAUSTED] * 20, FREE), 0.0, False),  # given back at last: all is well
        (samples(*[DATABASE_DOWN] * 40), 0.0, False),  # restarting would not bring the database back
    ],
)
def test_the_worker_restarts_after_30_s_of_an_exhausted_pool_on_end(sampled, seconds, due):
    assert pool_starved_seconds(sampled) == seconds
    assert pool_restart_due(sampled, starved_seconds=30) is due
    assert pool_restart_due(sampled, starved_seconds=0) is False  # 0: never


def test_the_watchdog_calls_once_when_the_pool_stays_exhausted_and_then_stops():
    ticks = iter(range(1000))
    stats = iter([FREE, EXHAUSTED, EXHAUSTED, BUSY, *[EXHAUSTED] * 50])
    called = []
    watchdog = PoolWatchdog(
        pool_stats=lambda: next(stats),
        starved_seconds=3,
        on_starved=lambda seconds, last: called.append((seconds, last)),
        every=0.001,
        clock=lambda: float(next(ticks)),
    )
    watchdog.start()
    watchdog.join(timeout=10)
    assert not watchdog.is_alive()
    # exhausted at ticks 1, 2; not at 3; exhausted from tick 4: due at tick 7
    assert called == [(3.0, EXHAUSTED)]
    assert watchdog.starved == 3.0


def _liveness_status(monkeypatch, settings, *, starved: float, limit: float) -> tuple[int, bytes]:
    from raterapp import asgi

    settings.WEB_POOL_STARVED_SECONDS = limit
    monkeypatch.setattr(web_worker, "pool_starved_now", lambda: starved)
    messages = []

    async def send(message):
        messages.append(message)

    async def unused(*args):
        raise AssertionError("the liveness route reached Django")

    routed = asgi.StreamsApart(unused, streams=unused)
    asyncio.run(routed({"type": "http", "path": "/api/health/live/", "method": "GET"}, None, send))
    return messages[0]["status"], messages[1]["body"]


def test_the_liveness_route_answers_in_the_event_loop_and_fails_once_the_pool_is_given_up(monkeypatch, settings):
    assert _liveness_status(monkeypatch, settings, starved=0, limit=30) == (200, b'{"ok":true}')
    assert _liveness_status(monkeypatch, settings, starved=29.9, limit=30) == (200, b'{"ok":true}')
    assert _liveness_status(monkeypatch, settings, starved=30, limit=30) == (503, b'{"ok":false}')
    assert _liveness_status(monkeypatch, settings, starved=99, limit=0) == (200, b'{"ok":true}')


@contextmanager
def answering(status: int):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/health/live/"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def pid_1_stand_in():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_the_liveness_check_passes_on_200():
    with answering(200) as url, pid_1_stand_in() as gunicorn:
        assert liveness_check(url, pid=gunicorn.pid, pause=0.01) == 0
        time.sleep(0.2)
        assert gunicorn.poll() is None


def test_the_liveness_check_sends_sigterm_after_three_failures_in_a_row(capsys):
    with answering(503) as url, pid_1_stand_in() as gunicorn:
        assert liveness_check(url, pid=gunicorn.pid, pause=0.01) == 1
        assert gunicorn.wait(timeout=10) == -signal.SIGTERM
    assert (
        capsys.readouterr().err
        == f"{url} failed 3 times (HTTP 503; HTTP 503; HTTP 503): SIGTERM to process {gunicorn.pid}\n"
    )


def test_the_liveness_check_kills_nothing_while_nothing_listens_yet():
    with answering(200) as url:
        pass  # closed: the port now refuses, as while the migrations run
    with pid_1_stand_in() as gunicorn:
        assert liveness_check(url, pid=gunicorn.pid, pause=0.01) == 1
        time.sleep(0.2)
        assert gunicorn.poll() is None


def test_compose_runs_the_liveness_check_isolated_and_it_imports_nothing_of_the_app():
    """docker-compose.yml's own command, with the repository for /app: by path and with ``-I``, so
    that neither the app nor raterapp/selectors/ (before the standard library's) is imported."""
    from tests.deploy.shape import ROOT, compose_read

    test = compose_read()["services"]["web"]["healthcheck"]["test"]
    assert test[:2] == ["CMD", "python"]
    command = [sys.executable, "-X", "importtime", *(arg.replace("/app/", f"{ROOT}/") for arg in test[2:])]
    with answering(200) as url, pid_1_stand_in() as gunicorn:
        checked = subprocess.run([*command, url, str(gunicorn.pid)], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stderr
        assert gunicorn.poll() is None
    imported = {line.split("|")[-1].strip() for line in checked.stderr.splitlines() if line.startswith("import time:")}
    assert "urllib.request" in imported
    assert not {name.split(".")[0] for name in imported} & {"raterapp", "django", "celery", "metrics_core"}
    assert test[2] == "-I"
