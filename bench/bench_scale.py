"""Benchmark of the estimates at scale (issue 17, part 4): one JSON line per figure.

  * ``estimate_quality`` from J distinct judged pairs (a ``jaccard`` sample drawn until it has
    J distinct non-self pairs; random verdicts; ``bench_metrics_core.judged_sample``), first and repeated call;
  * the ΔRecall/IQ bootstrap (``derived_metrics``, B replicates) on the same judged sample;
  * a cold S-draw ``jaccard`` sample from N items (the population's cell sets and affected
    cells computed inside the timing), and a warm one (those cached).

Each figure comes with its CPU seconds (all threads of the process), less sensitive than the
wall time to the other work of a shared machine.

Population: N items with about N/3 Base clusters, Exp moving 10% of the items and merging 2%
of the clusters (as ``bench_metrics_core.py``).

Run: .venv/bin/python bench/bench_scale.py [--items 10000000] [--judged 1000000] [--draws 100000]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

from metrics_core import _layout, derived_metrics, estimate_quality, population_from_labels, sample_pairs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from _common import make_codes  # noqa: E402
from bench_metrics_core import judged_sample  # noqa: E402

CPU = {}  # the process CPU seconds of the last timed call, by function name


def timed(function, *args, **kwargs):
    """Wall seconds of one call; its CPU seconds (all threads) go to CPU, a figure a shared,
    loaded machine inflates far less than the wall time."""
    start, cpu = time.perf_counter(), time.process_time()
    result = function(*args, **kwargs)
    CPU[function.__name__] = time.process_time() - cpu
    return result, time.perf_counter() - start


def emit(**figures) -> None:
    print(json.dumps(figures), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000_000)
    parser.add_argument("--judged-items", type=int, default=3_000_000, help="population of the judged sample")
    parser.add_argument("--judged", type=int, default=1_000_000)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", default="", help="comma-separated: estimate,bootstrap,sample")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    rng = np.random.default_rng(args.seed)

    if not {"estimate", "bootstrap"} <= skip:
        base, exp = make_codes(args.judged_items, args.judged_items // 3, rng)
        population = population_from_labels(base, exp)
        del base, exp
        sample, verdicts = judged_sample(population, args.judged, rng)
        if "estimate" not in skip:
            _, first = timed(estimate_quality, population, sample, verdicts)
            first_cpu = CPU["estimate_quality"]
            _, again = timed(estimate_quality, population, sample, verdicts)
            emit(
                figure="estimate_quality",
                items=args.judged_items,
                draws=sample.n_draws,
                distinct_pairs=len(sample),
                judged_pairs=args.judged,
                first_s=round(first, 3),
                again_s=round(again, 3),
                first_cpu_s=round(first_cpu, 3),
                again_cpu_s=round(CPU["estimate_quality"], 3),
            )
        if "bootstrap" not in skip:
            _, seconds = timed(
                derived_metrics, population, sample, verdicts, rng=np.random.default_rng(0), n_boot=args.n_boot
            )
            emit(
                figure="derived_metrics_bootstrap",
                draws=sample.n_draws,
                judged_pairs=args.judged,
                n_boot=args.n_boot,
                seconds=round(seconds, 3),
                cpu_s=round(CPU["derived_metrics"], 3),
            )
        del population, sample, verdicts

    if "sample" not in skip:
        base, exp = make_codes(args.items, args.items // 3, rng)
        population = population_from_labels(base, exp)
        del base, exp
        _layout._CACHE.clear()
        _, cold = timed(sample_pairs, population, n_draws=args.draws, scheme="jaccard", rng=rng)
        cold_cpu = CPU["sample_pairs"]
        _, warm = timed(sample_pairs, population, n_draws=args.draws, scheme="jaccard", rng=rng)
        emit(
            figure="sample_pairs",
            items=args.items,
            draws=args.draws,
            cold_s=round(cold, 3),
            warm_s=round(warm, 3),
            cold_cpu_s=round(cold_cpu, 3),
            warm_cpu_s=round(CPU["sample_pairs"], 3),
        )


if __name__ == "__main__":
    main()
