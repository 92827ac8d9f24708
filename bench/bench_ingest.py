"""Benchmark of the upload pipeline (issue 3 acceptance figure: 1M items in under 2 minutes).

Generates, in a temporary folder, an items file (item_id, base_cluster, exp_cluster; text
cluster ids, Exp moving 10% of the items and merging 2% of the clusters) and a catalogue
(item_id, title, category with 50 values), then runs ``experiment_create`` and
``experiment_prepare`` as the worker does, and reports the seconds of each step and the
peak RSS (``resource.getrusage``) after it. The files are generated in a child process,
so that the peak RSS is the pipeline's.

The database is the configured one (``DATABASE_URL``; SQLite without it), but the run
creates a test database of its own with Django's test utilities (``test_rater_bench``,
or a file in the temporary folder for SQLite) and destroys it afterwards; uploads and the
population file go to a temporary MEDIA_ROOT. Nothing is enqueued: the preparation runs
in this process.

Run:
  .venv/bin/python bench/bench_ingest.py [--items 1000000] [--format parquet|csv] [--draws 2000]
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/rater .venv/bin/python bench/bench_ingest.py
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
from _common import make_codes, parser  # noqa: E402


def generate(folder: str, n_items: int, kind: str, seed: int = 1) -> dict[str, str]:
    """Write the items file and the catalogue; returns their paths by upload kind."""
    rng = np.random.default_rng(seed)
    n_clusters = max(n_items // 4, 1)
    base, exp = make_codes(n_items, n_clusters, rng, moved=0.10, merged=0.02)
    ids = pa.array([f"item-{k:08d}" for k in range(n_items)])
    names = np.array([f"cluster-{k:08x}" for k in rng.permutation(n_clusters)], dtype=object)
    items = pa.table({"item_id": ids, "base_cluster": names[base], "exp_cluster": names[exp]})
    order = rng.permutation(n_items)  # the catalogue in another order than the items
    catalogue = pa.table(
        {
            "item_id": ids.take(pa.array(order)),
            "title": [f"Product {k}" for k in order],
            "category": np.array([f"category-{k}" for k in range(50)], dtype=object)[order % 50],
        }
    )
    paths = {"items": os.path.join(folder, f"items.{kind}"), "catalogue": os.path.join(folder, f"catalogue.{kind}")}
    for upload, table in (("items", items), ("catalogue", catalogue)):
        (pq.write_table if kind == "parquet" else pcsv.write_csv)(table, paths[upload])
    return paths


def peak_rss_mib() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


class StepTimes(logging.Handler):
    """Collects the preparation's per-step log lines, with the peak RSS when each step ends."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.steps: dict[str, dict] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("experiment %s: step %s took"):
            _, step, seconds = record.args
            self.steps[str(step)] = {"seconds": round(seconds, 2), "peak_rss_mib": peak_rss_mib()}


def run(paths: dict[str, str], folder: str, n_draws: int) -> dict:
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.files import File
    from django.db import connection
    from django.test.utils import override_settings

    from raterapp.models import Experiment, Item, PairTask, SampledPair
    from raterapp.services.experiments.create import experiment_create
    from raterapp.services.experiments.spec import experiment_spec
    from raterapp.services.preparation.pipeline import experiment_prepare
    from raterapp.tasks import experiment_prepare_task

    is_sqlite = connection.vendor == "sqlite"
    connection.settings_dict.setdefault("TEST", {})["NAME"] = (
        os.path.join(folder, "bench.sqlite3") if is_sqlite else "test_rater_bench"
    )
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    handler = StepTimes()
    logging.getLogger("raterapp.services.preparation.pipeline").addHandler(handler)
    figures = {"database": connection.vendor, "baseline_peak_rss_mib": peak_rss_mib()}
    try:
        with (
            override_settings(MEDIA_ROOT=os.path.join(folder, "media")),
            mock.patch.object(experiment_prepare_task, "delay"),
        ):
            owner = User.objects.create_user("bench")
            started = time.perf_counter()
            with open(paths["items"], "rb") as items, open(paths["catalogue"], "rb") as catalogue:
                files = {"items": File(items), "catalogue": File(catalogue)}
                spec = experiment_spec(files=files, name="bench", n_draws=n_draws, seed=7)
                experiment = experiment_create(owner=owner, spec=spec, files=files)
            figures["create"] = {"seconds": round(time.perf_counter() - started, 2), "peak_rss_mib": peak_rss_mib()}
            started = time.perf_counter()
            experiment_prepare(experiment_id=experiment.pk)
            figures["prepare_seconds"] = round(time.perf_counter() - started, 2)
            figures.update(handler.steps)
            experiment.refresh_from_db()
            figures["status"], figures["error"] = experiment.status, experiment.error
            figures["rows"] = {
                model.__name__: model.objects.filter(experiment=experiment).count()
                for model in (Item, SampledPair, PairTask)
            }
            figures["impact_groups"] = experiment.impact_groups.count()
            assert experiment.status == Experiment.Status.RATING, experiment.error
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return figures


def main() -> None:
    arguments = parser(__doc__)
    arguments.add_argument("--items", type=int, default=1_000_000)
    arguments.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    arguments.add_argument("--draws", type=int, default=2000)
    args = arguments.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as folder:
        started = time.perf_counter()
        with multiprocessing.get_context("fork").Pool(1) as pool:
            paths = pool.apply(generate, (folder, args.items, args.format))
        sizes = {kind: round(os.path.getsize(path) / 2**20, 1) for kind, path in paths.items()}
        print(f"generated {args.items:,} items in {time.perf_counter() - started:.1f} s, MiB: {sizes}", file=sys.stderr)
        figures = {"items": args.items, "format": args.format, "n_draws": args.draws, "file_mib": sizes}
        figures.update(run(paths, folder, args.draws))
    steps = ("validating", "computing_impact", "sampling")
    figures["ingest_impact_sampling_seconds"] = round(sum(figures[step]["seconds"] for step in steps), 2)
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
