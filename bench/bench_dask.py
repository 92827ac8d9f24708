"""Benchmark of the Dask backend (issue #8): impact metrics and 1M draws at 10M-100M items.

For each size N it generates partitioned Parquet (2.5M items a file: ids, Base clusters of
about 3 items, Exp moving 10% of the items and merging 2% of the clusters, weights uniform
in [0.5, 2)), then, each in a fresh process so that peak RSS is that step's own:

  * dask: a LocalCluster of 2 worker processes (1 thread each); reading and checking the
    items, the exact impact metrics and the per-cluster table written as Parquet ("impact"),
    then S draws of the jaccard scheme ("sample"). Peak driver RSS and peak RSS of each
    worker (getrusage in the worker).
  * memory: the in-memory backend on the same files (pyarrow read, factorisation, impact
    metrics overall and per Base and Exp cluster; S draws), where it fits (``--memory-max``).

Time per N is reported normalised to the smallest size (time/N ÷ time/N_min), so linear
scaling reads as 1.0. Results go to stdout as JSON lines and, with ``--out``, a markdown table.

Run: .venv/bin/python bench/bench_dask.py [--sizes 1000000] [--draws 1000000] [--data /tmp/abcde-bench]
     [--memory-max 30000000] [--out bench/results/dask.md]

``--parity`` instead compares a batch and a coupled experiment drawn on Dask with the in-memory engine
on one population of the first of ``--sizes`` (``dask_parity.py``; ``--draws`` a batch, ``--scheme``),
printing JSON and, with ``--out``, appending its markdown section.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROWS_PER_FILE = 2_500_000
ITEMS_PER_CLUSTER = 3


def generate(folder: Path, n_items: int, seed: int = 0) -> None:
    """Write ``n_items`` items as Parquet files of ROWS_PER_FILE rows in ``folder``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    n_clusters = max(1, n_items // ITEMS_PER_CLUSTER)
    merged = rng.random(n_clusters) < 0.02
    target = rng.integers(0, n_clusters, n_clusters)
    folder.mkdir(parents=True)
    for k, start in enumerate(range(0, n_items, ROWS_PER_FILE)):
        n = min(ROWS_PER_FILE, n_items - start)
        base = rng.integers(0, n_clusters, n)
        exp = base.copy()
        moved = rng.random(n) < 0.10
        exp[moved] = rng.integers(0, n_clusters, int(moved.sum()))
        exp = np.where(merged[exp], target[exp], exp)
        table = pa.table(
            {
                "item_id": np.arange(start, start + n, dtype=np.int64),
                "base_cluster": base,
                "exp_cluster": exp,
                "weight": rng.uniform(0.5, 2.0, n),
            }
        )
        pq.write_table(table, folder / f"part.{k:04d}.parquet")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def run_dask(folder: Path, n_draws: int, scratch: Path) -> dict:
    import logging

    from distributed import Client, LocalCluster

    from metrics_core import dask_backend

    logging.getLogger("distributed").setLevel(logging.ERROR)
    out: dict = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            start = time.perf_counter()
            items = dask_backend.read_items(str(folder))
            out["read_s"] = time.perf_counter() - start
            metrics = dask_backend.impact_metrics(items)
            dask_backend.write_parquet(dask_backend.impact_per_cluster(items), str(scratch / "per_cluster"))
            out["impact_s"] = time.perf_counter() - start
            start = time.perf_counter()
            pairs = dask_backend.sample_pairs(items, n_draws=n_draws, rng=np.random.default_rng(1))
            out["sample_s"] = time.perf_counter() - start
            workers = client.run(peak_rss_mib)
    out.update(
        items=metrics.items,
        JaccardDistance=metrics.metrics["JaccardDistance"],
        pair_rows=len(pairs),
        driver_peak_mib=peak_rss_mib(),
        worker_peak_mib=sorted(workers.values()),
    )
    return out


def run_memory(folder: Path, n_draws: int) -> dict:
    import pyarrow.parquet as pq

    import metrics_core as mc

    out: dict = {}
    start = time.perf_counter()
    table = pq.read_table(folder, columns=["item_id", "base_cluster", "exp_cluster", "weight"])
    pop = mc.population_from_labels(
        table["base_cluster"].to_numpy(), table["exp_cluster"].to_numpy(), table["weight"].to_numpy()
    )
    metrics = mc.impact_metrics(pop)
    mc.impact_per_base_cluster(pop)
    mc.impact_per_exp_cluster(pop)
    out["impact_s"] = time.perf_counter() - start
    start = time.perf_counter()
    sample = mc.sample_pairs(pop, n_draws=n_draws, rng=np.random.default_rng(1))
    out["sample_s"] = time.perf_counter() - start
    out.update(items=metrics.items, JaccardDistance=metrics.metrics["JaccardDistance"], pair_rows=len(sample))
    out["peak_mib"] = peak_rss_mib()
    return out


def child(argv: list[str]) -> dict:
    """Run one step in a fresh interpreter; returns its JSON answer."""
    done = subprocess.run([sys.executable, __file__, *argv], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{argv}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000000", help="comma-separated item counts")
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--data", default="/tmp/abcde-bench", help="folder for the generated Parquet")
    parser.add_argument("--memory-max", type=int, default=30_000_000, help="largest N for the in-memory backend")
    parser.add_argument("--out", help="write a markdown table here")
    parser.add_argument("--parity", action="store_true", help="Dask against memory: a batch, a coupled experiment")
    parser.add_argument("--scheme", default="jaccard", help="the scheme of --parity")
    parser.add_argument("--step", choices=("generate", "dask", "memory"), help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    data = Path(args.data)
    if args.parity:
        return run_parity(args, data)
    if args.step:
        folder = data / f"items-{args.n}"
        if args.step == "generate":
            generate(folder, args.n)
            result = {"generated": args.n}
        elif args.step == "dask":
            scratch = data / f"out-{args.n}-{os.getpid()}"
            result = run_dask(folder, args.draws, scratch)
        else:
            result = run_memory(folder, args.draws)
        print(json.dumps(result), flush=True)
        return

    rows = []
    for n in sorted(int(size) for size in args.sizes.split(",")):
        common = ["--n", str(n), "--data", str(data), "--draws", str(args.draws)]
        if not (data / f"items-{n}").exists():
            start = time.perf_counter()
            child(["--step", "generate", *common])
            print(json.dumps({"n": n, "generate_s": round(time.perf_counter() - start, 1)}), flush=True)
        row = {"n": n, "dask": child(["--step", "dask", *common])}
        if n <= args.memory_max:
            row["memory"] = child(["--step", "memory", *common])
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.out:
        Path(args.out).write_text(markdown(rows, args.draws))


def run_parity(args: argparse.Namespace, data: Path) -> None:
    import logging

    from dask_parity import markdown as parity_markdown
    from dask_parity import parity
    from distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    n = int(args.sizes.split(",")[0])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster):
            result = parity(data, n, args.draws, args.scheme)
    print(json.dumps(result), flush=True)
    if args.out:
        command = " ".join(["bench/bench_dask.py", *sys.argv[1:]])
        with open(args.out, "a") as out:
            out.write(parity_markdown(result, f".venv/bin/python {command}"))


def markdown(rows: list[dict], n_draws: int) -> str:
    first = rows[0]
    per_item = {key: first["dask"][key] / first["n"] for key in ("impact_s", "sample_s")}
    lines = [
        f"Dask backend, LocalCluster of 2 worker processes (1 thread each), {os.cpu_count()} cores; "
        f"{n_draws:,} jaccard draws. Ratio: (time/N) / (time/N at the smallest N); 1.0 = linear.",
        "",
        "| N | dask impact s (ratio) | dask sample s (ratio) | driver peak MiB | worker peaks MiB "
        "| memory impact s | memory sample s | memory peak MiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        d, m = row["dask"], row.get("memory")
        ratio = {key: d[key] / row["n"] / per_item[key] for key in per_item}
        memory = f"{m['impact_s']:.1f} | {m['sample_s']:.1f} | {m['peak_mib']:.0f}" if m else "does not fit | | "
        lines.append(
            f"| {row['n']:,} | {d['impact_s']:.1f} ({ratio['impact_s']:.2f}) | {d['sample_s']:.1f} "
            f"({ratio['sample_s']:.2f}) | {d['driver_peak_mib']:.0f} | "
            f"{' / '.join(f'{w:.0f}' for w in d['worker_peak_mib'])} | {memory} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
