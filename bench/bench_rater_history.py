"""What a rater's history costs the rating loop (issue 17): the progress each next-pair and submit
answers with (``rater_progress_get``: verdicts in all, today, in the experiment, this session),
timed for one rater with 1,000, 10,000 and ``--verdicts`` verdicts in a prepared experiment, on a
database made for the run (PostgreSQL; dropped at the end). The verdicts are spread one a minute
back from now, so today's are at most 1,440.

  .venv/bin/python bench/bench_rater_history.py [--verdicts 100000] [--db rater_bench_history]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judging import database_recreate  # noqa: E402

ROUNDS = 30


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--verdicts", type=int, default=100_000)
    parser.add_argument("--admin-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--db", default="rater_bench_history")
    args = parser.parse_args()
    database_recreate(args.admin_url, args.db)
    os.environ.update(
        DATABASE_URL=f"{args.admin_url.rsplit('/', 1)[0]}/{args.db}",
        SECRET_KEY=os.environ.get("SECRET_KEY", "bench"),
        DEBUG="true",
        DJANGO_SETTINGS_MODULE="raterapp.settings",
    )
    os.environ.pop("REDIS_URL", None)
    try:
        return measure(args.verdicts)
    finally:
        from django.db import connections

        connections.close_all()
        database_recreate(args.admin_url, args.db, drop_only=True)


def measure(largest: int) -> int:
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection

    from raterapp.db.rows import table
    from raterapp.models import Experiment, Item, Judgement, PairTask
    from raterapp.selectors.judging import rater_progress_get
    from raterapp.services.judging.progress import experiment_progress_recount

    call_command("migrate", verbosity=0)
    owner = User.objects.create(username="owner")
    experiment = Experiment.objects.create(name="history", owner=owner, status="rating", open_to_all_raters=True)
    rater = User.objects.create(username="rater")
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table(Item)} (experiment_id, item_id, position, title, description, image_url, url,"
            " attributes, base_cluster, exp_cluster, weight)"
            " SELECT %s, 'i' || g, g, '', '', '', '', '{}', 'b', 'e', 1 FROM generate_series(0, %s) g",
            [experiment.pk, largest],
        )
    for size in (1_000, 10_000, largest):
        have = Judgement.objects.filter(rater=rater).count()
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table(PairTask)} (experiment_id, item_a_id, item_b_id, rank, wanted, verdicts,"
                " gold_answer, pair_key)"
                f" SELECT %(e)s, a.id, b.id, g, 1, 1, '', 'k' || g FROM generate_series(%(have)s, %(last)s) g"
                f" JOIN {table(Item)} a ON a.experiment_id = %(e)s AND a.position = g"
                f" JOIN {table(Item)} b ON b.experiment_id = %(e)s AND b.position = g + 1",
                {"e": experiment.pk, "have": have, "last": size - 1},
            )
            cursor.execute(
                f"INSERT INTO {table(Judgement)} (task_id, rater_id, verdict, comment, client_id, created_at)"
                " SELECT t.id, %(rater)s, 'equivalent', '', gen_random_uuid(), now() - t.rank * interval '1 minute'"
                f" FROM {table(PairTask)} t WHERE t.experiment_id = %(e)s AND t.rank >= %(have)s",
                {"rater": rater.pk, "e": experiment.pk, "have": have},
            )
            cursor.execute("ANALYZE")
        experiment_progress_recount(experiment_id=experiment.pk)  # as every prepared experiment has
        times = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            rater_progress_get(experiment=experiment, rater=rater)
            times.append((time.perf_counter() - started) * 1000)
        print(f"{size:>9,} verdicts: progress {statistics.median(times):.2f} ms median, max {max(times):.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
