"""Chaos in the production shape: Redis killed for 20 s and the app's PostgreSQL connections
terminated for 10 s, while dashboards stream, raters submit and a preparation runs.

docker-compose.yml's web, both Celery workers and beat run with their own commands and
``.env.example``'s environment (the reconciler's and the refreshes' intervals shortened, so the
test waits seconds, not minutes), on the test database of the real PostgreSQL and on a Redis of the
test's own (no persistence: what was queued is lost with it). Before the chaos, 20 raters submit
verdicts over the API, an engineer holds 6 live streams of the experiment's page (reconnecting as a
browser does) and polls its dashboard, and an upload of 300,000 items starts preparing. Then
Redis gets SIGKILL, every other connection to the database is terminated every 0.2 s for 10 s,
and Redis comes back 20 s after it died. Afterwards:

- every endpoint answers within a second and ``/api/health/`` is green;
- every verdict the API accepted is stored exactly once, and nothing else is;
- the preparation ends rating, with the sample of an undisturbed run of the same upload;
- the stored estimates equal a recompute from every verdict;
- the services are the processes that were started; the web server's log holds no traceback.

Once (issue 33), the streams that failed on Redis each kept a database connection, and the web
tier answered 500 until a restart; and a database blip failed the preparation in flight.
"""

from __future__ import annotations

import io
import json
import random
import shutil
import signal
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from raterapp.services.accounts.api_tokens import api_token_create
from tests.e2e.conftest import _database_url
from tests.raterapp.helpers.preparation import rows_of
from tests.raterapp.prepared import experiment_prepared
from tests.raterapp.services.files import experiment_made

from .compose_services import (
    COMPOSE_DATABASE_URL,
    COMPOSE_REDIS_URL,
    logs_tail,
    service_command,
    service_start,
    services_stop,
)
from .processes import assert_logs_clean, free_port, redis_started, wait_until
from .shape import ROOT, Substitutions, compose_read, dockerfile_read, env_file_read

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"),
        reason="the production shape runs on PostgreSQL (CI sets DATABASE_URL)",
    ),
]
SERVICES = ("web", "worker-preparation", "worker-live", "beat")
# Shorter than .env.example's so that the catching up takes seconds; no Dask services (the upload
# is prepared in the worker); the prepared experiment's files where the test wrote them.
CHANGED = {
    "DASK_SCHEDULER_ADDRESS": "",
    "RECONCILE_INTERVAL_SECONDS": "2",
    "ESTIMATES_STALE_SECONDS": "4",
    "DERIVED_BOOTSTRAP_REPLICATES": "50",
    "RATER_AWARE_BOOTSTRAP_REPLICATES": "20",
}
RATERS = 20
STREAMS = 6
WARM_UP_VERDICTS = RATERS
REDIS_DOWN_SECONDS = 20
TERMINATING_SECONDS = 10
AFTER_SECONDS = 5
CATCH_UP_SECONDS = 60
THINK_SECONDS = 0.5
UPLOAD_ITEMS = 300_000
SEED = 33


@dataclass
class Record:
    """What the clients saw, shared by their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: Counter = field(default_factory=Counter)  # (what, status) -> count; status None: no answer
    accepted: list = field(default_factory=list)  # client ids the API accepted (201, or 200 for a retry)
    streams_unavailable: int = 0  # streams that ended with the "unavailable" event
    slowest_poll: float = 0.0

    def count(self, what: str, status: int | None) -> None:
        with self.lock:
            self.statuses[what, status] += 1


def _call(base: str, token: str, path: str, body: dict | None = None, *, timeout: float = 30):
    request = urllib.request.Request(
        base + path, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None
    except OSError:
        return None, None


def _rater(base: str, token: str, experiment_id: int, stop: threading.Event, record: Record) -> None:
    """Asks for a pair, thinks, submits; a submit without a definite answer (none, or 5xx) is sent
    again with its client id until it has one, as the rating page does."""
    rng = random.Random(token)
    while not stop.is_set():
        status, body = _call(base, token, f"/api/experiments/{experiment_id}/next-pair/", {"holding": []})
        record.count("next-pair", status)
        if status != 200 or body["pair"] is None:
            stop.wait(THINK_SECONDS)
            continue
        stop.wait(rng.uniform(0, 2 * THINK_SECONDS))
        verdict = {"task": body["pair"]["task"], "verdict": rng.choice(["equivalent", "not_equivalent"]),
                   "client_id": str(uuid.uuid4())}  # fmt: skip
        answered = []
        for attempt in range(30):  # until a definite answer, or a while after the test stopped
            status, _ = _call(base, token, "/api/judgements/", verdict)
            record.count("judgements", status)
            answered.append(status)
            if (status is not None and status < 500) or (stop.is_set() and attempt >= 3):
                break
            time.sleep(min(2.0, 0.2 * 2**attempt))
        if status is None or status >= 500:
            record.count("judgements: no definite answer", status)
        if status == 200 and any(earlier is not None and earlier >= 500 for earlier in answered):
            record.count("judgements: 5xx for a stored verdict", answered[0])
        if status in (200, 201):
            with record.lock:
                record.accepted.append(verdict["client_id"])


def _streamer(base: str, token: str, experiment_id: int, stop: threading.Event, record: Record) -> None:
    """An experiment page's live stream: read until it ends, reconnect 2 s later (EventSource's retry)."""
    request = urllib.request.Request(
        f"{base}/api/experiments/{experiment_id}/events/",
        headers={"Authorization": f"Token {token}", "Accept": "text/event-stream"},
    )
    while not stop.is_set():
        try:
            with urllib.request.urlopen(request, timeout=30) as stream:
                record.count("events", stream.status)
                while not stop.is_set() and (line := stream.readline()):
                    if line.startswith(b"event: unavailable"):
                        with record.lock:
                            record.streams_unavailable += 1
        except urllib.error.HTTPError as error:
            record.count("events", error.code)
        except OSError:
            record.count("events", None)
        stop.wait(2)


def _poller(base: str, token: str, experiment_id: int, stop: threading.Event, record: Record) -> None:
    """The page's fallback without a stream: the dashboard every 2 s."""
    while not stop.is_set():
        started = time.monotonic()
        status, _ = _call(base, token, f"/api/experiments/{experiment_id}/dashboard/")
        record.count("dashboard", status)
        with record.lock:
            record.slowest_poll = max(record.slowest_poll, time.monotonic() - started)
        stop.wait(2)


def _terminator(seconds: float, spared: int, ended: list) -> None:
    """Terminate every connection to the test database but the test's own, every 0.2 s for ``seconds``."""
    import psycopg

    with psycopg.connect(_database_url(), autocommit=True) as own:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ended.append(own.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> %s",
                (spared,),
            ).fetchone()[0])  # fmt: skip
            time.sleep(0.2)


def _upload_files() -> dict[str, bytes]:
    rng = np.random.default_rng(SEED)
    base = rng.integers(0, UPLOAD_ITEMS // 5, UPLOAD_ITEMS)
    exp = np.where(rng.random(UPLOAD_ITEMS) < 0.1, rng.integers(0, UPLOAD_ITEMS // 5, UPLOAD_ITEMS), base)
    ids = pa.array([f"i{k}" for k in range(UPLOAD_ITEMS)])
    files = {}
    for kind, table in (
        ("items", pa.table({"item_id": ids, "base_cluster": base, "exp_cluster": exp})),
        ("catalogue", pa.table({"item_id": ids, "title": pa.array([f"Item {k}" for k in range(UPLOAD_ITEMS)])})),
    ):
        sink = io.BytesIO()
        pq.write_table(table, sink)
        files[kind] = sink.getvalue()
    return files


def _upload(base: str, token: str, files: dict[str, bytes]) -> int:
    """POST /api/experiments/ as a script of the team would: the new experiment's id."""
    fields = {"name": "uploaded during the chaos", "n_draws": "2000", "seed": str(SEED)}
    uploads = {kind: SimpleUploadedFile(f"{kind}.parquet", data) for kind, data in files.items()}
    request = urllib.request.Request(
        f"{base}/api/experiments/", data=encode_multipart(BOUNDARY, {**fields, **uploads}),
        headers={"Authorization": f"Token {token}", "Content-Type": MULTIPART_CONTENT, "Accept": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=120) as response:
        assert response.status == 201
        return json.loads(response.read())["id"]


def _users(experiment) -> tuple[str, list[str]]:
    """The engineer's token (the experiment's owner) and the raters'."""
    rater_group = Group.objects.get_or_create(name="rater")[0]
    tokens = []
    for k in range(RATERS):
        rater = User.objects.create_user(f"chaos-rater-{k}")
        rater.groups.add(rater_group)
        tokens.append(api_token_create(actor=rater)[1])
    return api_token_create(actor=experiment.owner)[1], tokens


def _services_started(tmp_path, redis_url: str, web_port: int) -> tuple[dict, dict]:
    image, compose = dockerfile_read(), compose_read()
    folder = tmp_path / "compose"
    (folder / "data").mkdir(parents=True)
    (folder / "staticfiles").mkdir()
    (folder / "logs").mkdir()
    shutil.copy(ROOT / ".env.example", folder / ".env")
    env_file = env_file_read(folder / ".env")
    subs = Substitutions([
        (COMPOSE_DATABASE_URL, _database_url()),
        (COMPOSE_REDIS_URL, redis_url),
        ("--bind 0.0.0.0:8000", f"--bind 127.0.0.1:{web_port}"),
        ("tcp://dask-scheduler:8786", ""),
        ("/app/staticfiles", str(folder / "staticfiles")),
        ("/data", str(folder / "data")),
    ])  # fmt: skip
    processes = {}
    for name in SERVICES:
        command, env = service_command(compose["services"][name], image, env_file, subs)
        env.update(CHANGED, MEDIA_ROOT=str(settings.MEDIA_ROOT))
        processes[name] = service_start(name, command, env, folder / "logs")
    return processes, {"logs": folder / "logs"}


def test_the_production_shape_rides_out_redis_and_database_outages(transactional_db, tmp_path):
    from raterapp.models import EstimateSnapshot, Experiment, Judgement, PairTask
    from raterapp.services.preparation.pipeline import experiment_prepare
    from raterapp.services.refresh.estimates import estimates_compute

    owner = User.objects.create_user("owner")
    owner.groups.add(Group.objects.get_or_create(name="engineer")[0])
    rng = np.random.default_rng(16)
    ideal = rng.integers(0, 150, 600)
    base = np.where(rng.random(600) < 0.3, rng.integers(0, 150, 600), ideal).tolist()
    exp = np.where(rng.random(600) < 0.3, rng.integers(0, 150, 600), ideal).tolist()
    with transaction.atomic():
        experiment = experiment_prepared(owner=owner, base=base, exp=exp, n_draws=8000, seed=16, name="chaos")
    engineer, raters = _users(experiment)
    files = _upload_files()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        spared = cursor.fetchone()[0]

    redis_port, web_port = free_port(), free_port()
    redis = redis_started(redis_port, tmp_path)
    processes, paths = _services_started(tmp_path, f"redis://127.0.0.1:{redis_port}/0", web_port)
    logs = paths["logs"]
    url = f"http://127.0.0.1:{web_port}"
    record, stop = Record(), threading.Event()
    clients = [threading.Thread(target=_rater, args=(url, token, experiment.pk, stop, record)) for token in raters]
    clients += [
        threading.Thread(target=_streamer, args=(url, engineer, experiment.pk, stop, record)) for _ in range(STREAMS)
    ]
    clients.append(threading.Thread(target=_poller, args=(url, engineer, experiment.pk, stop, record)))
    pids = {name: process.pid for name, process in processes.items()}
    try:
        wait_until(lambda: _call(url, engineer, "/api/health/")[0] == 200, timeout=90, what="a healthy web service",
                   alive=lambda: all(p.poll() is None for p in processes.values()))  # fmt: skip
        for client in clients:
            client.start()
        wait_until(lambda: len(record.accepted) >= WARM_UP_VERDICTS, timeout=90, what="verdicts before the chaos")
        uploaded = Experiment.objects.get(pk=_upload(url, engineer, files))
        wait_until(lambda: Experiment.objects.values_list("status", flat=True).get(pk=uploaded.pk) != "queued",
                   timeout=60, interval=0.05, what="the preparation worker to start the upload")  # fmt: skip

        redis.send_signal(signal.SIGKILL)
        redis.wait()
        down_at = time.monotonic()
        preparing = Experiment.objects.values_list("status", flat=True).get(pk=uploaded.pk)
        ended: list[int] = []
        terminator = threading.Thread(target=_terminator, args=(TERMINATING_SECONDS, spared, ended))
        terminator.start()
        time.sleep(REDIS_DOWN_SECONDS)
        redis = redis_started(redis_port, tmp_path)
        back_at = time.monotonic()
        terminator.join()
        time.sleep(AFTER_SECONDS)
        stop.set()
        deadline = time.monotonic() + 60
        for client in clients:
            client.join(timeout=max(0.1, deadline - time.monotonic()))
        assert not any(client.is_alive() for client in clients), (
            f"clients still waiting: {sorted(record.statuses.items(), key=str)}"
        )

        answers = {}  # every endpoint, once the outages are over
        for path, token, body in (
            ("/api/health/", engineer, None),
            ("/api/experiments/", engineer, None),
            (f"/api/experiments/{experiment.pk}/", engineer, None),
            (f"/api/experiments/{experiment.pk}/dashboard/", engineer, None),
            (f"/api/experiments/{experiment.pk}/estimates/", engineer, None),
            (f"/api/experiments/{uploaded.pk}/", engineer, None),
            ("/api/raters/me/", raters[0], None),
            (f"/api/experiments/{experiment.pk}/next-pair/", raters[0], {"holding": []}),
        ):
            started = time.monotonic()
            status, answer = _call(url, token, path, body, timeout=10)
            answers[path] = (status, round(time.monotonic() - started, 3))
        health = _call(url, engineer, "/api/health/")[1]

        def prepared():
            uploaded.refresh_from_db()
            return uploaded.status in ("rating", "failed")

        wait_until(prepared, timeout=CATCH_UP_SECONDS, what="the upload's preparation to end")
        stored = list(Judgement.objects.filter(task__experiment=experiment).values_list("client_id", flat=True))

        def caught_up():
            snapshot = EstimateSnapshot.objects.filter(experiment=experiment).order_by("-created_at", "-pk").first()
            if snapshot is None or snapshot.judgements != len(stored):
                return None
            return snapshot.estimates == estimates_compute(experiment=Experiment.objects.get(pk=experiment.pk))

        wait_until(caught_up, timeout=back_at + CATCH_UP_SECONDS - time.monotonic(), interval=0.5,
                   what="estimates equal to a recompute from every verdict")  # fmt: skip
        figures = {
            "accepted verdicts": len(record.accepted),
            "responses": {f"{what} {status}": n for (what, status), n in sorted(record.statuses.items(), key=str)},
            "streams ended unavailable": record.streams_unavailable,
            "connections terminated": sum(ended),
            "slowest dashboard poll (s)": round(record.slowest_poll, 2),
            "after the outages (status, s)": answers,
            "upload": [uploaded.status, uploaded.error, uploaded.preparation_attempts],
            "s from Redis down to estimates caught up": round(time.monotonic() - down_at, 1),
        }
        print("\nchaos figures:", json.dumps(figures, indent=1))
        assert all(status == 200 and took < 1.0 for status, took in answers.values()), figures
        assert health == {"ok": True, "database": {"status": "ok"}, "redis": {"status": "ok"}}, health
        assert sorted(map(str, stored)) == sorted(record.accepted), figures  # none lost, none doubled
        assert len(set(record.accepted)) == len(record.accepted)
        assert sum(PairTask.objects.filter(experiment=experiment).values_list("verdicts", flat=True)) == len(stored)
        # The database out of reach: 503, send it again; never a server error, never for a stored verdict.
        assert not [key for key in record.statuses if key[1] is not None and key[1] >= 500 and key[1] != 503], figures
        assert not [key for key in record.statuses if key[0].startswith("judgements: ")], figures
        assert record.streams_unavailable >= STREAMS and sum(ended) > 0, figures  # the chaos was felt
        assert preparing not in ("rating", "failed") and (uploaded.status, uploaded.error) == ("rating", ""), figures
        assert {name: process.pid for name, process in processes.items() if process.poll() is None} == pids
    except BaseException:
        print(logs_tail(logs))
        raise
    finally:
        stop.set()
        services_stop(processes)
        redis.kill()
        redis.wait()
    # Django logs each 503 (the database out of reach) at ERROR: those are the expected ones.
    web_log = [line for line in (logs / "web.log").read_text().splitlines() if "Service Unavailable: /" not in line]
    assert_logs_clean({"web": "\n".join(web_log)}, what="the web service")
    reference = experiment_made(owner=owner, name="undisturbed", seed=SEED, n_draws=2000, files={
        kind: SimpleUploadedFile(f"{kind}.parquet", data) for kind, data in files.items()})  # fmt: skip
    experiment_prepare(experiment_id=reference.pk)
    mine, theirs = rows_of(uploaded), rows_of(Experiment.objects.get(pk=reference.pk))
    assert {k: mine[k] for k in ("pairs", "tasks")} == {k: theirs[k] for k in ("pairs", "tasks")}
