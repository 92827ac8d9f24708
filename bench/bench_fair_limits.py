"""One account cannot slow the others (issue 33: one rater polling ``/api/raters/me/`` from 8
connections raised another rater's next-pair p50 from 14 to 699 ms). Goal: the other raters'
next-pair p95 under that load within 2x its quiet value.

What it does:
1. creates a fresh PostgreSQL database (``--db``, dropped at the end) with rater B's experiment
   of ``--pairs`` pairs and ``--experiments`` more experiments open to every rater, in which rater
   A gave a few verdicts each (``/api/raters/me/`` answers for all of them);
2. starts docker-compose.yml's web command (gunicorn, 2 uvicorn workers) on real Redis with the
   production settings, rates included (``--env NAME=VALUE`` overrides, e.g. to lift a rate);
3. runs ``--rounds`` quiet rounds and as many loaded rounds, interleaved (the machine is shared
   and noisy), ``--seconds`` each: in every round ``--others`` raters B ask next-pair, think
   ``--think`` seconds (a quick person), submit a verdict, and again; in a loaded round rater A
   also asks ``/api/raters/me/`` from ``--connections`` keep-alive connections as fast as the
   server answers, in a process of its own;
4. reports per round the B raters' next-pair and submit latency as the client sees it (queueing
   included) and in Django (``Server-Timing``), and A's answers; then the medians of the quiet and
   of the loaded rounds and the loaded / quiet ratio of next-pair's p95.

  .venv/bin/python bench/bench_fair_limits.py [--rounds 3] [--seconds 20] [--connections 8]
      [--others 4] [--env API_RATE_RATER_POLL=1000000/min ...] [--output report.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_judging import (  # noqa: E402
    PYTHON,
    ROOT,
    bench_environment,
    build,
    compose_web_command,
    database_recreate,
    free_port,
    raters_create,
    wait_until_up,
)
from judging_raters import Rater  # noqa: E402

# Rater A's experiments, each with a few of A's verdicts; B's experiment is open to A too.
SPREAD = """
import django, itertools, json, sys, uuid
django.setup()
from django.contrib.auth.models import User
from raterapp.models import Experiment, ExperimentBudget, Item, PairTask
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.judging.progress import experiment_progress_recount
n_experiments, verdicts = int(sys.argv[1]), int(sys.argv[2])
owner, rater = User.objects.get(username="bench-owner"), User.objects.get(username="bench-rater-0")
for k in range(n_experiments):
    experiment = Experiment.objects.create(name=f"A's {k}", owner=owner, status=Experiment.Status.RATING,
                                           open_to_all_raters=True, gold_rate=0, seed=k)
    ExperimentBudget.objects.update_or_create(experiment=experiment, defaults={"max_verdicts": None})
    items = Item.objects.bulk_create(
        Item(experiment=experiment, item_id=f"i{i}", position=i, title=f"Item {i}", base_cluster="b",
             exp_cluster="e", weight=1.0) for i in range(20))
    PairTask.objects.bulk_create(PairTask(experiment=experiment, item_a=a, item_b=b, rank=r, wanted=1)
                                 for r, (a, b) in enumerate(itertools.combinations(items, 2)))
    experiment_progress_recount(experiment_id=experiment.pk)
    for _ in range(verdicts):
        task = assignment_next(experiment=experiment, rater=rater)
        judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
print(json.dumps({"experiments": n_experiments}))
"""


class ThinkingRater(Rater):
    """A rater B: next-pair, think, submit, again (``judging_raters.Rater`` records each request)."""

    def __init__(self, *args, think: float, **kwargs):
        super().__init__(*args, separate=True, **kwargs)
        self.think = think

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            while not self.stop.is_set():
                status, body = self.call(conn, "next-pair", f"/api/experiments/{self.experiment}/next-pair/", {})
                if status != 200 or body["pair"] is None:
                    self.errors.append(f"next-pair {status} {body}")
                    return
                self.stop.wait(self.think * self.rng.uniform(0.5, 1.5))
                answer = {"task": body["pair"]["task"], "verdict": "equivalent", "client_id": str(uuid.uuid4())}
                status, _ = self.call(conn, "submit", "/api/judgements/", answer)
                if status not in (200, 201):
                    self.errors.append(f"submit {status}")
                    return
                self.submitted.add(answer["client_id"])
        except Exception as exc:  # noqa: BLE001 - reported in the summary
            self.errors.append(repr(exc))
        finally:
            conn.close()


def flood(port: int, token: str, connections: int, seconds: float, out) -> None:
    """Rater A: ``/api/raters/me/`` from ``connections`` keep-alive connections, each asking again
    as soon as it has an answer, for ``seconds``; the statuses counted go to ``out``."""
    stop = time.monotonic() + seconds
    counts: Counter = Counter()
    lock = threading.Lock()

    def poll():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine: Counter = Counter()
        while time.monotonic() < stop:
            try:
                conn.request("GET", "/api/raters/me/", headers={"Authorization": f"Token {token}"})
                response = conn.getresponse()
                response.read()
                mine[response.status] += 1
            except (OSError, http.client.HTTPException):
                mine["error"] += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        with lock:
            counts.update(mine)

    threads = [threading.Thread(target=poll) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put(dict(counts))


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), **{f"p{q}": round(float(np.percentile(values, q)), 1) for q in (50, 95)}}


def one_round(args, port: int, tokens: list[str], experiment: int, loaded: bool, seed: int) -> dict:
    stop = threading.Event()
    others = [
        ThinkingRater(port, token, experiment, stop, seed=seed * 100 + k, think=args.think)
        for k, token in enumerate(tokens[1:])
    ]
    attacker, answers = None, multiprocessing.Queue()
    if loaded:
        attacker = multiprocessing.Process(
            target=flood, args=(port, tokens[0], args.connections, args.seconds, answers), daemon=True
        )
        attacker.start()
    started = time.perf_counter()
    for rater in others:
        rater.start()
    time.sleep(args.seconds)
    stop.set()
    for rater in others:
        rater.join()
    seconds = time.perf_counter() - started
    a_answers = {}
    if attacker is not None:
        a_answers = answers.get(timeout=60)
        attacker.join(timeout=30)
    samples = [s for rater in others for s in rater.samples]
    report = {"loaded": loaded, "seconds": round(seconds, 1)}
    for endpoint in ("next-pair", "submit"):
        rows = [s for s in samples if s[0] == endpoint and s[3] in (200, 201)]
        report[endpoint] = {
            "client_ms": percentiles([s[2] for s in rows]),
            "server_ms": percentiles([s[1] for s in rows if s[1] == s[1]]),
            "refused": sum(1 for s in samples if s[0] == endpoint and s[3] not in (200, 201)),
        }
    report["a"] = {"answers": a_answers, "per_second": round(sum(a_answers.values()) / seconds, 1)}
    report["errors"] = [e for rater in others for e in rater.errors][:5]
    print(json.dumps(report), flush=True)
    return report


def medians(rounds: list[dict], loaded: bool) -> dict:
    chosen = [r for r in rounds if r["loaded"] == loaded]

    def median(endpoint, kind, q):
        return round(statistics.median(r[endpoint][kind][q] for r in chosen), 1)

    return {
        f"{endpoint} {kind} p{q}": median(endpoint, kind, f"p{q}")
        for endpoint in ("next-pair", "submit")
        for kind in ("client_ms", "server_ms")
        for q in (50, 95)
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="quiet rounds, and as many loaded ones")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--connections", type=int, default=8, help="rater A's connections")
    parser.add_argument("--others", type=int, default=4, help="raters B")
    parser.add_argument("--think", type=float, default=0.25, help="a rater B's seconds between pair and verdict")
    parser.add_argument("--experiments", type=int, default=10, help="rater A's experiments besides B's")
    parser.add_argument("--pairs", type=int, default=20_000, help="pairs of B's experiment")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server")
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--db", default="rater_bench_fair")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/6", help="flushed at the start and end")
    parser.add_argument("--output", help="also write the report (JSON) to this file")
    args = parser.parse_args()

    import redis

    redis.Redis.from_url(args.redis_url).flushdb()  # no throttle counts of an earlier run
    database_recreate(args.admin_url, args.db)
    env = {**bench_environment(args), **dict(item.split("=", 1) for item in args.env)}
    server = None
    try:
        experiment = build(env, args.pairs)
        tokens = raters_create(env, 1 + args.others)
        subprocess.run([PYTHON, "-c", SPREAD, str(args.experiments), "5"], cwd=ROOT, env=env, check=True)
        port = free_port()
        command = compose_web_command(port=port, workers=None)
        print(" ".join(command[1:]), flush=True)
        server = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
        wait_until_up(port)
        one_round(args, port, tokens, experiment, loaded=False, seed=0)  # warm-up, not counted
        rounds = [
            one_round(args, port, tokens, experiment, loaded=loaded, seed=k + 1)
            for k in range(args.rounds)
            for loaded in (False, True)
        ]
        quiet, loaded = medians(rounds, False), medians(rounds, True)
        ratio = round(loaded["next-pair client_ms p95"] / quiet["next-pair client_ms p95"], 2)
        summary = {"quiet (median of rounds)": quiet, "loaded (median of rounds)": loaded}
        summary["next-pair client p95 loaded / quiet"] = ratio
        summary["goal met (<= 2)"] = ratio <= 2
        print(json.dumps(summary, indent=2), flush=True)
        if args.output:
            Path(args.output).write_text(json.dumps({"rounds": rounds, **summary}, indent=2))
        errors = [e for r in rounds for e in r["errors"]]
        return 0 if ratio <= 2 and not errors else 1
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        database_recreate(args.admin_url, args.db, drop_only=True)
        import redis

        redis.Redis.from_url(args.redis_url).flushdb()


if __name__ == "__main__":
    sys.exit(main())
