"""Peak memory of the command line on large inputs (issue 17, part 3): one JSON line per figure.

For N items (default 30M; ``--items 100000000`` for the 100M run) it writes an items file with
integer ``item_id``, ``base_cluster`` and ``exp_cluster`` (24 bytes an item: the input's own
size) as Parquet, in row groups of 1M rows, then runs as subprocesses

  * ``python -m metrics_core impact ITEMS`` and
  * ``python -m metrics_core sample ITEMS --pairs 100000 --seed 1 --out PAIRS``,

and reports each one's wall time and peak resident memory (its own VmHWM, through
``peak_rss.py``) minus that of a child that only imports the command line (the interpreter,
numpy, pandas and pyarrow), per item. In the same run it times scikit-learn's
``contingency_matrix(sparse=True)`` and ``population_from_labels`` + ``impact_metrics`` (what
``impact`` computes after reading) on the same labels in this process, and reports their ratio.

Population: about N/3 Base clusters, Exp moving 10% of the items and merging 2% of the clusters
(as ``bench_metrics_core.py``).

Run: .venv/bin/python bench/bench_memory.py [--items 30000000] [--skip-sklearn] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _common import make_codes  # noqa: E402

ROW_GROUP = 1 << 20
PEAK_RSS = pathlib.Path(__file__).resolve().parent / "peak_rss.py"
BASELINE = "import metrics_core.cli, numpy, pandas, pyarrow.parquet, pyarrow.csv"


def emit(**figures) -> None:
    print(json.dumps(figures), flush=True)


def write_items(path: pathlib.Path, base: np.ndarray, exp: np.ndarray) -> None:
    schema = pa.schema([("item_id", pa.int64()), ("base_cluster", pa.int64()), ("exp_cluster", pa.int64())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, len(base), ROW_GROUP):
            stop = min(start + ROW_GROUP, len(base))
            columns = [np.arange(start, stop, dtype=np.int64), base[start:stop], exp[start:stop]]
            writer.write_table(pa.table(columns, schema=schema), row_group_size=ROW_GROUP)


def run_child(*args: str) -> dict:
    """Run ``python peak_rss.py args...``: its wall time, output and peak RSS (bytes, its VmHWM)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(PEAK_RSS), *args], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    *_, last = done.stderr.strip().splitlines() or [""]
    if done.returncode != 0 or not last.startswith("peak_rss_bytes "):
        raise SystemExit(f"{args}: exit {done.returncode}: {done.stderr[-2000:]}")
    return {"seconds": seconds, "peak": int(last.split()[1]), "stdout": done.stdout}


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=30_000_000)
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=1, help="sklearn/impact timing rounds (median ratio)")
    parser.add_argument("--skip-sklearn", action="store_true", help="no in-process timing (for the 100M run)")
    parser.add_argument("--skip", default="", help="comma-separated: impact,sample")
    parser.add_argument("--keep", help="write the inputs to this folder and keep them")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    folder = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="bench_memory_"))
    folder.mkdir(parents=True, exist_ok=True)
    items = folder / f"items_{args.items}.parquet"
    n = args.items
    try:
        base, exp = make_codes(n, n // 3, np.random.default_rng(args.seed))
        if not items.exists():
            write_items(items, base, exp)
        if args.skip_sklearn:
            del base, exp
        baseline = run_child("-c", BASELINE)["peak"]
        emit(figure="baseline", items=n, interpreter_and_imports_MiB=round(baseline / 2**20))
        input_bytes = 24 * n
        if "impact" not in skip:
            run = run_child("-m", "metrics_core", "impact", str(items))
            result = json.loads(run["stdout"])
            beyond = run["peak"] - baseline
            emit(
                figure="cli_impact",
                items=n,
                affected_items=result["affected_items"],
                seconds=round(run["seconds"], 2),
                peak_MiB=round(run["peak"] / 2**20),
                beyond_interpreter_bytes_per_item=round(beyond / n, 1),
                beyond_input_bytes_per_item=round((beyond - input_bytes) / n, 1),
            )
        if "sample" not in skip:
            out = folder / "pairs.parquet"
            run = run_child(
                "-m", "metrics_core", "sample", str(items), "--pairs", str(args.pairs), "--seed", "1", "--out", str(out)
            )
            beyond = run["peak"] - baseline
            emit(
                figure="cli_sample",
                items=n,
                pairs=args.pairs,
                seconds=round(run["seconds"], 2),
                peak_MiB=round(run["peak"] / 2**20),
                beyond_interpreter_bytes_per_item=round(beyond / n, 1),
                beyond_input_bytes_per_item=round((beyond - input_bytes) / n, 1),
            )
        if not args.skip_sklearn:
            compare_with_sklearn(base, exp, args.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    emit(figure="this_process", peak_MiB=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def compare_with_sklearn(base: np.ndarray, exp: np.ndarray, rounds: int) -> None:
    """scikit-learn's contingency_matrix(sparse=True) and the impact pass on the same labels, alternated."""
    from sklearn.metrics.cluster import contingency_matrix

    from metrics_core import impact_metrics, population_from_labels

    def impact(base, exp):
        return impact_metrics(population_from_labels(base, exp))

    sklearn_s, impact_s = [], []
    for _ in range(rounds):
        sklearn_s.append(timed(contingency_matrix, base, exp, sparse=True)[1])
        impact_s.append(timed(impact, base, exp)[1])
    ratios = np.array(impact_s) / np.array(sklearn_s)
    emit(
        figure="impact_vs_sklearn",
        items=len(base),
        sklearn_contingency_s=[round(s, 2) for s in sklearn_s],
        impact_s=[round(s, 2) for s in impact_s],
        impact_over_sklearn_median=round(float(np.median(ratios)), 3),
    )


if __name__ == "__main__":
    main()
