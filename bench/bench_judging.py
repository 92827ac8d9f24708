"""Load test of the rater loop against the production web server (issue 17: 50 raters with no
think time; at least 60 verdicts/s, server-time p95 of next-pair and submit at most 25 ms, the
same figures within 20% at 1k and at 100k pairs, exactly one stored verdict per submit).

What it does:
1. creates a fresh PostgreSQL database (``--db``, dropped at the end), migrates it and
   builds an experiment of ``--pairs`` pairs to judge directly (items, tasks in random rank
   order, an unlimited budget; the preparation pipeline is not what is measured), or with
   ``--demo-draws`` the Febrl demo experiment through the real preparation;
2. starts gunicorn as docker-compose.yml's web service does (uvicorn workers under ASGI,
   ``--workers``) on ``--port``;
3. runs ``--raters`` rater threads, each with its own keep-alive connection and API
   token, for ``--seconds``: as the judging page does, submit a verdict that also leases the
   next pair (``--separate``: lease the next pair, submit a verdict), repeat. One submit in
   ten is sent twice (a double click) to exercise the idempotent path;
4. reports, per endpoint, the server-side time (the ``Server-Timing`` header that
   ``raterapp.middleware.ServerTimingMiddleware`` adds: time spent in Django) and the
   client-side latency (which includes queueing for a free worker), as p50/p95/p99, and
   the throughput; then checks that the database holds exactly one verdict per submit.

Run (PostgreSQL on localhost, trust auth):
  .venv/bin/python bench/bench_judging.py [--raters 50] [--seconds 60] [--pairs 1000] [--workers N]
      [--port 8000] [--output report.json]
Compare sizes in one go (the ratios are what counts on a shared machine):
  .venv/bin/python bench/bench_judging.py --pairs 1000 --pairs 100000
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judging_raters import Rater, summary  # noqa: E402

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


BUILD = """
import django, itertools, json, math, sys
django.setup()
import numpy as np
from django.contrib.auth.models import Group, User
from django.db import transaction
from raterapp.models import Experiment, ExperimentBudget, Item, PairTask
n_pairs, replication = int(sys.argv[1]), int(sys.argv[2])
owner = User.objects.create_user("bench-owner")
owner.groups.add(Group.objects.get_or_create(name="engineer")[0])
with transaction.atomic():
    experiment = Experiment.objects.create(
        name=f"bench {n_pairs} pairs", owner=owner, status=Experiment.Status.RATING,
        open_to_all_raters=True, gold_rate=0, replication=replication, seed=1,
    )
    ExperimentBudget.objects.update_or_create(experiment=experiment, defaults={"max_verdicts": None})
    n_items = math.ceil((1 + math.sqrt(1 + 8 * n_pairs)) / 2)
    items = Item.objects.bulk_create(
        [Item(experiment=experiment, item_id=f"i{k}", position=k, title=f"Item {k}", description="A bench item.",
              base_cluster=str(k // 3), exp_cluster=str(k // 4), weight=1.0) for k in range(n_items)],
        batch_size=5000,
    )
    ranks = np.random.default_rng(1).permutation(n_pairs)
    pairs = itertools.islice(itertools.combinations(range(n_items), 2), n_pairs)
    PairTask.objects.bulk_create(
        [PairTask(experiment=experiment, item_a=items[a], item_b=items[b], rank=int(rank), wanted=replication)
         for (a, b), rank in zip(pairs, ranks)],
        batch_size=5000,
    )
    try:  # as the services that add tasks do (where the code has the counter row)
        from raterapp.services.judging.progress import experiment_progress_recount
    except ImportError:
        pass
    else:
        experiment_progress_recount(experiment_id=experiment.pk)
print(json.dumps({"experiment": experiment.pk}))
"""


def build(env: dict, pairs: int, replication: int = 1) -> int:
    """Migrate and build an experiment of ``pairs`` pairs to judge, each wanting ``replication``
    verdicts; its id."""
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    out = subprocess.run(
        [PYTHON, "-c", BUILD, str(pairs), str(replication)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])["experiment"]


RATERS = """
import django, json, sys
django.setup()
from django.contrib.auth.models import Group, User
from raterapp.services.accounts.api_tokens import api_token_create
group = Group.objects.get_or_create(name="rater")[0]
tokens = []
for k in range(int(sys.argv[1])):
    user = User.objects.create_user(f"bench-rater-{k}")
    user.groups.add(group)
    tokens.append(api_token_create(actor=user)[1])
print(json.dumps(tokens))
"""


def raters_create(env: dict, raters: int) -> list[str]:
    out = subprocess.run(
        [PYTHON, "-c", RATERS, str(raters)], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def prepare(env: dict, raters: int, draws: int) -> tuple[int, list[str]]:
    """Migrate, create users and the demo experiment, prepare it; (experiment id, tokens)."""
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    script = f"""
import django, json, os, tempfile
from pathlib import Path
django.setup()
from django.contrib.auth.models import Group, User
from raterapp.services.accounts.api_tokens import api_token_create
from raterapp.services.demo import demo_experiment_ensure
from raterapp.services.preparation.pipeline import experiment_prepare
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raters", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, help="gunicorn workers (default: docker-compose.yml's)")
    parser.add_argument("--pairs", type=int, action="append", help="pairs to judge; repeat to compare sizes")
    parser.add_argument(
        "--replication",
        type=int,
        default=1,
        help="verdicts each pair wants: 50 raters at 60/s judge 1,000 pairs of 1 verdict in 17 s",
    )
    parser.add_argument(
        "--separate", action="store_true", help="ask next-pair before every verdict (the loop before `next`)"
    )
    parser.add_argument("--demo-draws", type=int, help="the Febrl demo experiment with this many draws instead")
    parser.add_argument("--port", type=int, default=0, help="gunicorn's port (default: a free one)")
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--db", default="rater_bench_judging")
    parser.add_argument("--output", help="also write the report (JSON) to this file")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/6", help="flushed at the end")
    args = parser.parse_args()
    sizes = [None] if args.demo_draws else (args.pairs or [1000])
    reports = [run(args, pairs) for pairs in sizes]
    if len(reports) > 1:
        first, last = reports[0], reports[-1]
        ratios = {
            "verdicts_per_second": _ratio(last["verdicts_per_second"], first["verdicts_per_second"]),
            "next_pair_server_p95": _ratio(
                last["next_pair"]["server_ms"]["p95"], first["next_pair"]["server_ms"]["p95"]
            ),
            "submit_server_p95": _ratio(last["submit"]["server_ms"]["p95"], first["submit"]["server_ms"]["p95"]),
        }
        print(json.dumps({f"ratios {last['pairs']} / {first['pairs']} pairs": ratios}, indent=2))
        reports.append({"ratios_last_over_first": ratios})
    if args.output:
        Path(args.output).write_text(json.dumps(reports, indent=2))
    return 0 if all(r.get("every_verdict_stored_once", True) and not r.get("errors") for r in reports) else 1


def _ratio(a: float, b: float) -> float:
    return round(a / b, 2) if b else float("nan")


def compose_web_command(*, port: int, workers: int | None) -> list[str]:
    """docker-compose.yml's web command (what follows its ``exec``), bound to ``port``; ``workers``
    replaces its worker count when given."""
    import yaml

    command = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]["command"]
    argv = shlex.split(shlex.split(command)[-1].split("exec ", 1)[1])
    assert argv[0] == "gunicorn", argv
    argv = [PYTHON, "-m", "gunicorn", *argv[1:], "--log-level", "warning"]
    argv[argv.index("--bind") + 1] = f"127.0.0.1:{port}"
    if workers is not None:
        argv[argv.index("--workers") + 1] = str(workers)
    return argv


def bench_environment(args) -> dict:
    """The app's environment for a bench run: ``args.db`` on ``args.admin_url``'s server, a media
    folder of its own, ``args.redis_url``."""
    media = tempfile.mkdtemp(prefix="bench-judging-")
    return {
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


def run(args, pairs: int | None) -> dict:
    database_recreate(args.admin_url, args.db)
    env = bench_environment(args)
    server = None
    try:
        if pairs is None:
            experiment, tokens = prepare(env, args.raters, args.demo_draws)
        else:
            experiment = build(env, pairs, args.replication)
            tokens = raters_create(env, args.raters)
            print(f"built: experiment {experiment}, {pairs} pairs to judge", flush=True)
        port = args.port or free_port()
        command = compose_web_command(port=port, workers=args.workers)
        print(" ".join(command[1:]), flush=True)
        server = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
        wait_until_up(port)
        stop = threading.Event()
        raters = [
            Rater(port, token, experiment, stop, seed=k, separate=args.separate) for k, token in enumerate(tokens)
        ]
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
            "pairs": pairs,
            "replication": args.replication,
            "raters": args.raters,
            "workers": int(command[command.index("--workers") + 1]),
            "web_threads": int(env.get("WEB_THREADS", 1)),
            "loop": "separate next-pair" if args.separate else "verdict with next",
            "seconds": round(seconds, 1),
            "next_pair": summary(samples, "next-pair", seconds),
            "submit": summary(samples, "submit", seconds),
            "verdicts_per_second": round(len(submitted) / seconds, 1),
            "verdicts_submitted": len(submitted),
            "verdicts_stored": len(stored),
            "every_verdict_stored_once": stored == submitted,
            "errors": errors[:5],
        }
        print(json.dumps(report, indent=2), flush=True)
        return report
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
