"""BLAS threads and metrics_core's matrix products: CPU and wall time of the rater-aware estimates
(the Dawid-Skene EM over 100 bootstrap weightings, abcde-spec §13) with numpy's default BLAS threads
and with :func:`metrics_core.blas_threads.use_one_blas_thread`, as the product's processes run them.

Each round runs both, as processes of their own, in turns (A B A B); each process computes the
rater-aware estimates of ``--reps`` simulated experiments (tests/metrics_core/rater_simulation.py:
600 draws, three raters a pair, 5% gold). Printed: the median CPU seconds (user + sys, from
``os.wait4``) and wall seconds of each, their ratios, and the largest difference between the two
runs' estimates (the sums' order differs with the threads, and the EM stops at its tolerance: a
few 1e-8 is expected).

Run: .venv/bin/python bench/bench_blas_threads.py [--rounds 3] [--reps 5]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

CHILD = """
import json, sys
import numpy as np
from metrics_core.blas_threads import blas_threads, use_one_blas_thread
from tests.metrics_core.helpers import simulation_population
from tests.metrics_core.rater_simulation import raw_and_rater_aware
if sys.argv[1] == "one":
    use_one_blas_thread()
pop, ideal = simulation_population()
rng = np.random.default_rng(2026)
values = []
for _ in range(int(sys.argv[2])):
    _, aware = raw_and_rater_aware(rng, pop, ideal, draws=600, n_boot=100)
    values.append({name: [e.value, e.ci_low, e.ci_high] for name, e in aware.quality.estimates.items()})
print(json.dumps({"threads": blas_threads(), "values": values}))
"""


def run(mode: str, reps: int) -> dict:
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, str(reps)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    out = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise SystemExit(f"the {mode} run failed ({status})")
    result = json.loads(out.strip().splitlines()[-1])
    return {**result, "cpu": usage.ru_utime + usage.ru_stime, "wall": time.perf_counter() - start}


def largest_difference(a: list, b: list) -> float:
    pairs = [(x, y) for ra, rb in zip(a, b) for name in ra for x, y in zip(ra[name], rb[name])]
    if any((x is None) != (y is None) for x, y in pairs):
        return float("inf")
    return max((abs(x - y) for x, y in pairs if x is not None), default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"default": [], "one": []}
    for _ in range(args.rounds):
        for mode in runs:
            runs[mode].append(run(mode, args.reps))
    median = {mode: {k: statistics.median(r[k] for r in rs) for k in ("cpu", "wall")} for mode, rs in runs.items()}
    print(
        json.dumps(
            {
                "cpus": os.cpu_count(),
                "blas_threads": {mode: rs[0]["threads"] for mode, rs in runs.items()},
                "median_seconds": median,
                "one_over_default": {k: median["one"][k] / median["default"][k] for k in ("cpu", "wall")},
                "largest_difference": largest_difference(runs["default"][0]["values"], runs["one"][0]["values"]),
            }
        )
    )


if __name__ == "__main__":
    main()
