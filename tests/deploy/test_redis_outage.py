"""Chaos: Redis is killed for 20 s while 30 raters submit verdicts through the API.

The test runs its own Redis (a free port, no persistence: what was queued is lost with it), a
prefork Celery worker, Celery beat and gunicorn in production mode, on the test database (the real
PostgreSQL). 30 rater sessions (threads) ask for pairs and submit verdicts; once 30 are in,
Redis gets SIGKILL, and 20 s later a new Redis starts on the same port. Then:

- no request answered 500 (or failed to answer) at any time;
- every verdict the API accepted is stored exactly once, and nothing else is;
- the worker and beat are the processes that were started, alive, and the worker works;
- the stored estimates equal a recompute from every verdict within 30 s of Redis returning
  (the outbox and the reconciler catch up what the outage lost).

The figures are printed (``-s``) and kept in the assertion messages.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import transaction

from raterapp.services.api_tokens import api_token_create
from tests.e2e.conftest import _database_url
from tests.raterapp.prepared import experiment_prepared

from .processes import free_port, http_status, redis_started, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"),
        reason="30 concurrent raters need PostgreSQL (CI sets DATABASE_URL)",
    ),
]
ROOT = Path(__file__).resolve().parents[2]
RATERS = 30
WARM_UP_VERDICTS = RATERS  # raters submit with Redis up until the API accepted this many, then
OUTAGE_SECONDS = 20  # Redis is gone, then
AFTER_SECONDS = 5  # back, before the raters stop
CATCH_UP_SECONDS = 30
PAUSE_SECONDS = 0.3  # each rater's thinking time between verdicts


@dataclass
class Record:
    """What the raters saw, shared by their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: dict = field(default_factory=dict)  # (endpoint, status) -> count
    server_errors: list = field(default_factory=list)
    failures: list = field(default_factory=list)  # no answer at all
    accepted: list = field(default_factory=list)  # client ids the API accepted (201, or 200 for a retry)
    during_outage: int = 0

    def count(self, endpoint: str, status: int) -> None:
        with self.lock:
            self.statuses[endpoint, status] = self.statuses.get((endpoint, status), 0) + 1


def _request(base: str, token: str, path: str, body: dict) -> tuple[int, dict | None]:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, None


def _rater(base: str, token: str, experiment_id: int, stop: threading.Event, outage: threading.Event, record: Record):
    rng = random.Random(token)
    while not stop.is_set():
        try:
            status, body = _request(base, token, f"/api/experiments/{experiment_id}/next-pair/", {"holding": []})
        except OSError as exc:
            record.failures.append(("next-pair", repr(exc)))
            continue
        record.count("next-pair", status)
        if status >= 500:
            record.server_errors.append(("next-pair", status))
        if status != 200 or body["pair"] is None:
            time.sleep(PAUSE_SECONDS)
            continue
        time.sleep(rng.uniform(0, 2 * PAUSE_SECONDS))
        verdict = {"task": body["pair"]["task"], "verdict": rng.choice(["equivalent", "not_equivalent"]),
                   "client_id": str(uuid.uuid4())}
        for _ in range(3):  # a submit that got no answer is sent again with its client_id (idempotent)
            try:
                status, _ = _request(base, token, "/api/judgements/", verdict)
                break
            except OSError as exc:
                record.failures.append(("judgements", repr(exc)))
        else:
            continue
        record.count("judgements", status)
        if status >= 500:
            record.server_errors.append(("judgements", status))
        if status in (200, 201):
            with record.lock:
                record.accepted.append(verdict["client_id"])
                record.during_outage += outage.is_set()


def _start(name: str, command: list[str], env: dict, logs: Path) -> subprocess.Popen:
    log = open(logs / f"{name}.log", "w")  # noqa: SIM115 - the process owns it until the end
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 15
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _population(n: int, rng) -> tuple[list[int], list[int]]:
    ideal = rng.integers(0, n // 4, n)
    base = np.where(rng.random(n) < 0.3, rng.integers(0, n // 4, n), ideal)
    exp = np.where(rng.random(n) < 0.3, rng.integers(0, n // 4, n), ideal)
    return base.tolist(), exp.tolist()


def _logs(logs: Path) -> str:
    return "\n".join(f"--- {path.name}\n{path.read_text()[-4000:]}" for path in sorted(logs.glob("*.log")))


def test_raters_submit_through_a_20_second_redis_outage(transactional_db, tmp_path):
    from raterapp.models import EstimateSnapshot, Experiment, Judgement, OutboxMessage, PairTask
    from raterapp.services.estimates import estimates_compute

    logs = tmp_path / "logs"
    logs.mkdir()
    owner = User.objects.create_user("owner")
    owner.groups.add(Group.objects.get_or_create(name="engineer")[0])
    base, exp = _population(600, np.random.default_rng(16))
    with transaction.atomic():
        experiment = experiment_prepared(owner=owner, base=base, exp=exp, n_draws=8000, seed=16, name="chaos")
    tasks = PairTask.objects.filter(experiment=experiment).count()
    assert tasks >= 1500, tasks  # more than the raters judge in the time
    rater_group = Group.objects.get_or_create(name="rater")[0]
    tokens = []
    for k in range(RATERS):
        rater = User.objects.create_user(f"chaos-rater-{k}")
        rater.groups.add(rater_group)
        tokens.append(api_token_create(actor=rater)[1])

    redis_port, web_port = free_port(), free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "PYTEST_XDIST_WORKER")},
        "DJANGO_SETTINGS_MODULE": "raterapp.settings",
        "DEBUG": "false",
        "SECRET_KEY": "chaos-test-secret-key-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": _database_url(),
        "CONN_MAX_AGE": "0",
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "CELERY_BROKER_URL": "",
        "DATA_DIR": str(tmp_path / "data"),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "RECONCILE_INTERVAL_SECONDS": "2",
        "ESTIMATES_STALE_SECONDS": "4",
        "DERIVED_BOOTSTRAP_REPLICATES": "50",
        "API_RATE_USER": "1000000/min",
        "API_RATE_ANON": "1000000/min",
        "CELERY_TASK_ALWAYS_EAGER": "false",
    }
    (tmp_path / "data").mkdir()
    redis = redis_started(redis_port, logs)
    processes = []
    try:
        worker = _start("worker", [sys.executable, "-m", "celery", "-A", "raterapp", "worker", "--pool=prefork",
                                   "--concurrency=2", "-Q", "live,preparation", "--hostname", f"chaos-{os.getpid()}@localhost",
                                   "--loglevel=INFO", "--without-gossip", "--without-mingle"], env, logs)
        beat = _start("beat", [sys.executable, "-m", "celery", "-A", "raterapp", "beat", "--loglevel=INFO",
                               "--schedule", str(tmp_path / "data" / "celerybeat-schedule")], env, logs)
        web = _start("web", [sys.executable, "-m", "gunicorn", "raterapp.wsgi:application", "--bind",
                             f"127.0.0.1:{web_port}", "--workers", "4", "--timeout", "60", "--access-logfile", "-",
                             "--access-logformat", '%(r)s %(s)s %(M)sms'], env, logs)
        processes = [worker, beat, web]
        base_url = f"http://127.0.0.1:{web_port}"
        wait_until(lambda: http_status(f"{base_url}/api/health/") == 200, timeout=60, what="gunicorn",
                   alive=lambda: all(p.poll() is None for p in processes))
        wait_until(lambda: "ready." in (logs / "worker.log").read_text(), timeout=60, what="the worker")

        record, stop, outage = Record(), threading.Event(), threading.Event()
        threads = [threading.Thread(target=_rater, args=(base_url, token, experiment.pk, stop, outage, record))
                   for token in tokens]
        for thread in threads:
            thread.start()
        wait_until(lambda: len(record.accepted) >= WARM_UP_VERDICTS, timeout=60, what="verdicts before the outage")
        before = len(record.accepted)
        redis.send_signal(signal.SIGKILL)
        redis.wait()
        outage.set()
        time.sleep(OUTAGE_SECONDS)
        outage.clear()
        redis = redis_started(redis_port, logs)
        back = time.monotonic()
        time.sleep(AFTER_SECONDS)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)

        stored = list(Judgement.objects.filter(task__experiment=experiment).values_list("client_id", flat=True))

        def caught_up():
            snapshot = EstimateSnapshot.objects.filter(experiment=experiment).order_by("-created_at", "-pk").first()
            if snapshot is None or snapshot.judgements != len(stored):
                return None
            return snapshot.estimates == estimates_compute(experiment=Experiment.objects.get(pk=experiment.pk))

        wait_until(caught_up, timeout=back + CATCH_UP_SECONDS - time.monotonic(), interval=0.5,
                   what="estimates equal to a recompute from every verdict")
        catch_up = time.monotonic() - back
        figures = {
            "raters": RATERS,
            "accepted verdicts": len(record.accepted),
            "accepted before the outage": before,
            "accepted during the outage": record.during_outage,
            "responses": {f"{endpoint} {status}": n for (endpoint, status), n in sorted(record.statuses.items())},
            "tasks": tasks,
            "outbox rows left": OutboxMessage.objects.count(),
            "seconds from Redis back to estimates equal to a recompute": round(catch_up, 1),
        }
        print("\nchaos figures:", json.dumps(figures, indent=1))

        assert record.server_errors == [], figures
        assert record.failures == [], figures
        assert record.during_outage > 0, figures  # the outage was felt by the raters, and they went on
        assert sorted(map(str, stored)) == sorted(record.accepted), figures  # none lost, none doubled
        assert len(set(record.accepted)) == len(record.accepted)
        verdicts = sum(PairTask.objects.filter(experiment=experiment).values_list("verdicts", flat=True))
        assert verdicts == len(stored)
        assert worker.poll() is None and beat.poll() is None and web.poll() is None, _logs(logs)
        worker_log = (logs / "worker.log").read_text()
        assert "Unrecoverable error" not in worker_log and "Connected to redis" in worker_log.split("Connection to broker lost")[-1]
        # The worker still works: a snapshot stored after Redis came back, by the worker (beat's reconciler or a refresh).
        assert "Task raterapp.reconcile[" in worker_log.split("Connection to broker lost")[-1], _logs(logs)
    except BaseException:
        print(_logs(logs))
        raise
    finally:
        _stop(processes)
        redis.kill()
        redis.wait()
