"""Load test of the rater loop against the real server (issue 4: next-pair and submit at 50
concurrent raters, target p95 under 50 ms server-side).

What it does:
1. creates a fresh PostgreSQL database (``--db``, dropped at the end), migrates it and
   prepares the Febrl demo experiment in it with ``--draws`` draws (many pairs, so that
   the raters never run dry);
2. starts gunicorn (``--workers`` sync workers, the production command) on it;
3. runs ``--raters`` rater threads, each with its own keep-alive connection and API
   token, for ``--seconds``: lease the next pair, submit a verdict, repeat. One submit in
   ten is sent twice (a double click) to exercise the idempotent path;
4. reports, per endpoint, the server-side time (the ``Server-Timing`` header that
   ``raterapp.middleware.ServerTimingMiddleware`` adds: time spent in Django) and the
   client-side latency (which includes queueing for a free worker), as p50/p95/p99, and
   the throughput; then checks that the database holds exactly one verdict per submit.

Run (PostgreSQL on localhost, trust auth):
  .venv/bin/python bench/bench_judging.py [--raters 50] [--seconds 30] [--workers CORES] [--output report.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def database_recreate(admin_url: str, name: str, *, drop_only: bool = False) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            conn.execute(f'CREATE DATABASE "{name}"')


def prepare(env: dict, raters: int, draws: int) -> tuple[int, list[str]]:
    """Migrate, create users and the demo experiment, prepare it; (experiment id, tokens)."""
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    script = f"""
import django, json, os, tempfile
from pathlib import Path
django.setup()
from django.contrib.auth.models import Group, User
from raterapp.services.api_tokens import api_token_create
from raterapp.services.demo import demo_experiment_ensure
from raterapp.services.preparation import experiment_prepare
from raterapp.models import Experiment, PairTask
owner = User.objects.create_user("bench-owner")
owner.groups.add(Group.objects.get_or_create(name="engineer")[0])
with tempfile.TemporaryDirectory() as folder:
    experiment, _ = demo_experiment_ensure(owner=owner, folder=Path(folder), n_draws={draws})
experiment_prepare(experiment_id=experiment.pk)
experiment.refresh_from_db()
assert experiment.status == "rating", experiment.error
Experiment.objects.filter(pk=experiment.pk).update(gold_rate=0)
group = Group.objects.get_or_create(name="rater")[0]
tokens = []
for k in range({raters}):
    user = User.objects.create_user(f"bench-rater-{{k}}")
    user.groups.add(group)
    tokens.append(api_token_create(actor=user)[1])
print(json.dumps({{"experiment": experiment.pk, "tokens": tokens, "tasks": PairTask.objects.count()}}))
"""
    out = subprocess.run([PYTHON, "-c", script], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"prepared: experiment {result['experiment']}, {result['tasks']} pairs to judge", flush=True)
    return result["experiment"], result["tokens"]


def wait_until_up(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/health/")
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("the server did not come up")


class Rater(threading.Thread):
    def __init__(self, port: int, token: str, experiment: int, stop: threading.Event, seed: int):
        super().__init__(daemon=True)
        self.port, self.token, self.experiment, self.stop = port, token, experiment, stop
        self.rng = np.random.default_rng(seed)
        self.samples: list[tuple[str, float, float, int]] = []  # endpoint, server ms, client ms, status
        self.submitted: set[str] = set()
        self.errors: list[str] = []

    def call(self, conn, endpoint: str, path: str, body: dict) -> tuple[int, dict | None]:
        payload = json.dumps(body)
        headers = {"Authorization": f"Token {self.token}", "Content-Type": "application/json"}
        started = time.perf_counter()
        conn.request("POST", path, body=payload, headers=headers)
        response = conn.getresponse()
        data = response.read()
        client_ms = (time.perf_counter() - started) * 1000
        timing = response.getheader("Server-Timing", "app;dur=nan")
        self.samples.append((endpoint, float(timing.split("dur=")[1]), client_ms, response.status))
        return response.status, (json.loads(data) if data else None)

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            while not self.stop.is_set():
                status, body = self.call(conn, "next-pair", f"/api/experiments/{self.experiment}/next-pair/", {})
                if status != 200 or body["pair"] is None:
                    self.errors.append(f"next-pair {status} {body}")
                    return
                verdict = ("equivalent", "not_equivalent", "unsure")[int(self.rng.integers(3))]
                answer = {"task": body["pair"]["task"], "verdict": verdict, "client_id": str(uuid.uuid4())}
                for _ in range(2 if self.rng.random() < 0.1 else 1):
                    status, _ = self.call(conn, "submit", "/api/judgements/", answer)
                    if status not in (200, 201):
                        self.errors.append(f"submit {status}")
                self.submitted.add(answer["client_id"])
        except Exception as exc:  # noqa: BLE001 - reported in the summary
            self.errors.append(repr(exc))
        finally:
            conn.close()


def summary(samples: list, endpoint: str, seconds: float) -> dict:
    rows = [s for s in samples if s[0] == endpoint]
    server = np.array([s[1] for s in rows])
    client = np.array([s[2] for s in rows])

    def pct(values):
        return {f"p{q}": round(float(np.percentile(values, q)), 1) for q in (50, 95, 99)}

    rate = round(len(rows) / seconds, 1)
    return {"requests": len(rows), "per_second": rate, "server_ms": pct(server), "client_ms": pct(client)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raters", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="gunicorn workers (default: cores)")
    parser.add_argument("--draws", type=int, default=40000)
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--db", default="rater_bench_judging")
    parser.add_argument("--output", help="also write the report (JSON) to this file")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/6", help="flushed at the end")
    args = parser.parse_args()

    database_recreate(args.admin_url, args.db)
    media = tempfile.mkdtemp(prefix="bench-judging-")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "raterapp.settings",
        "DATABASE_URL": args.admin_url.rsplit("/", 1)[0] + "/" + args.db,
        "SECRET_KEY": "bench-only",
        "DEBUG": "false",
        "DATA_DIR": media,
        "MEDIA_ROOT": media + "/media",
        "LOG_LEVEL": "WARNING",
        # Production's broker: submits schedule (debounced) recomputes on it; no worker consumes them here.
        "REDIS_URL": args.redis_url,
    }
    server = None
    try:
        experiment, tokens = prepare(env, args.raters, args.draws)
        port = free_port()
        server = subprocess.Popen(
            [PYTHON, "-m", "gunicorn", "raterapp.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", str(args.workers), "--log-level", "warning"],
            cwd=ROOT, env=env, start_new_session=True,
        )  # fmt: skip
        wait_until_up(port)
        stop = threading.Event()
        raters = [Rater(port, token, experiment, stop, seed=k) for k, token in enumerate(tokens)]
        started = time.perf_counter()
        for rater in raters:
            rater.start()
        time.sleep(args.seconds)
        stop.set()
        for rater in raters:
            rater.join()
        seconds = time.perf_counter() - started
        samples = [s for r in raters for s in r.samples]
        errors = [e for r in raters for e in r.errors]
        submitted = set().union(*(r.submitted for r in raters))
        stored = stored_client_ids(env, experiment)
        report = {
            "raters": args.raters,
            "workers": args.workers,
            "seconds": round(seconds, 1),
            "next_pair": summary(samples, "next-pair", seconds),
            "submit": summary(samples, "submit", seconds),
            "verdicts_per_second": round(len(submitted) / seconds, 1),
            "verdicts_submitted": len(submitted),
            "verdicts_stored": len(stored),
            "every_verdict_stored_once": stored == submitted,
            "errors": errors[:5],
        }
        print(json.dumps(report, indent=2))
        if args.output:
            Path(args.output).write_text(json.dumps(report, indent=2))
        return 0 if report["every_verdict_stored_once"] and not errors else 1
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        database_recreate(args.admin_url, args.db, drop_only=True)
        import redis

        redis.Redis.from_url(args.redis_url).flushdb()


def stored_client_ids(env: dict, experiment: int) -> set[str]:
    script = f"""
import django, json
django.setup()
from raterapp.models import Judgement
ids = [str(c) for c in Judgement.objects.filter(task__experiment_id={experiment}).values_list("client_id", flat=True)]
print(json.dumps(ids))
"""
    out = subprocess.run([PYTHON, "-c", script], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    ids = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(ids) == len(set(ids))
    return set(ids)


if __name__ == "__main__":
    sys.exit(main())
