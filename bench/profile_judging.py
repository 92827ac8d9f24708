"""Where a lone next-pair and submit spend their time and queries (issue 17): builds an experiment
as bench_judging.py does, then runs ``--rounds`` of next-pair and submit in this process through
Django's request handler (all middleware, token authentication), counting each request's queries
and timing it; with ``--profile`` also cProfile's top functions by cumulative time.

  .venv/bin/python bench/profile_judging.py [--pairs 1000] [--rounds 200] [--profile] [--sql]
      [--db rater_profile_judging] [--redis-url redis://127.0.0.1:6379/13]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judging import bench_environment, build, database_recreate, raters_create  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    parser.add_argument("--sql", action="store_true", help="print the SQL of one next-pair and one submit")
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--db", default="rater_profile_judging")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args()
    database_recreate(args.admin_url, args.db)
    env = {**bench_environment(args), "ALLOWED_HOSTS": "testserver"}
    os.environ.update(env)
    try:
        experiment = build({**os.environ}, args.pairs)
        token = raters_create({**os.environ}, 1)[0]
        return measure(args, experiment, token)
    finally:
        from django.db import connections

        connections.close_all()
        database_recreate(args.admin_url, args.db, drop_only=True)


def measure(args, experiment: int, token: str) -> int:
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    times: dict[str, list[float]] = {"next-pair": [], "submit": []}
    queries: dict[str, list[int]] = {"next-pair": [], "submit": []}
    sql: dict[str, list[str]] = {}

    def call(endpoint: str, path: str, body: dict) -> dict:
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.post(path, body, content_type="application/json")
            times[endpoint].append((time.perf_counter() - started) * 1000)
        assert response.status_code in (200, 201), response.content
        queries[endpoint].append(len(captured))
        sql[endpoint] = [f"{q['time']} {q['sql']}" for q in captured.captured_queries]
        return response.json()

    def loop(rounds: int) -> None:
        for _ in range(rounds):
            pair = call("next-pair", f"/api/experiments/{experiment}/next-pair/", {})["pair"]
            answer = {"task": pair["task"], "verdict": "equivalent", "client_id": str(uuid.uuid4())}
            call("submit", "/api/judgements/", answer)

    loop(5)  # warm up: imports, connections, the token's last use
    for values in (*times.values(), *queries.values()):
        values.clear()
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    loop(args.rounds)
    if profiler:
        profiler.disable()
    for endpoint in times:
        ms = sorted(times[endpoint])
        print(
            f"{endpoint}: {statistics.median(ms):.2f} ms median, p95 {ms[int(len(ms) * 0.95)]:.2f} ms, "
            f"queries {sorted(set(queries[endpoint]))}"
        )
    if args.sql:
        for endpoint, statements in sql.items():
            print(f"\n-- {endpoint}")
            print("\n".join(statements))
    if profiler:
        pstats.Stats(profiler).sort_stats(os.environ.get("PROFILE_SORT", "cumulative")).print_stats(45)
    return 0


if __name__ == "__main__":
    sys.exit(main())
