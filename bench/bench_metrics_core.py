"""Benchmark of metrics_core on one machine (issue: metrics_core acceptance figures).

Measures, on N items with about K clusters and each kind of cluster id:
  * exact impact metrics (factorisation, overall, per Base and per Exp cluster)
    against scikit-learn's contingency_matrix(sparse=True) on the same labels,
    in the same run: the ratio is what we quote (this machine is shared and noisy);
  * S draws of each sampling scheme, beyond the impact metrics;
  * estimates from J judged pairs;
  * peak traced memory of each phase (tracemalloc traces numpy's buffers), in a
    separate pass, since tracing slows allocation.

Run: .venv/bin/python bench/bench_metrics_core.py [--items 10000000] [--clusters 3000000]
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

import numpy as np

from metrics_core import (
    SCHEMES,
    _layout,
    estimate_quality,
    impact_metrics,
    impact_per_base_cluster,
    impact_per_exp_cluster,
    pairs_for_judgement,
    population_from_labels,
    sample_pairs,
    verdicts_from_judgements,
)


def make_codes(n_items: int, n_clusters: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Base clusters of random sizes; Exp moves 10% of items and merges 2% of clusters."""
    base = rng.integers(0, n_clusters, n_items)
    exp = base.copy()
    moved = rng.random(n_items) < 0.10
    exp[moved] = rng.integers(0, n_clusters, int(moved.sum()))
    merged = rng.random(n_clusters) < 0.02
    target = rng.integers(0, n_clusters, n_clusters)
    exp = np.where(merged[exp], target[exp], exp)
    return base, exp


def as_ids(codes: np.ndarray, kind: str, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "int-dense":
        return codes
    if kind == "int-random64":
        ids = rng.choice(np.iinfo(np.int64).max, size=n_clusters, replace=False)
        return ids[codes]
    names = np.array([f"cluster-{k:08x}" for k in rng.permutation(n_clusters)], dtype=object)
    return names[codes]


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def peak_mib(function, *args, **kwargs) -> int:
    """Peak traced memory of one call (tracemalloc traces numpy's buffers), in a pass of its own:
    tracing slows allocation, so timings are taken without it."""
    tracemalloc.start()
    try:
        function(*args, **kwargs)
        return round(tracemalloc.get_traced_memory()[1] / 2**20)
    finally:
        tracemalloc.stop()


def impact_overall(base, exp):
    """What ``python -m metrics_core impact`` prints: factorisation and the overall metrics."""
    population = population_from_labels(base, exp)
    return population, impact_metrics(population)


def impact_with_clusters(base, exp):
    """The overall metrics and the per-Base-cluster and per-Exp-cluster tables."""
    population, overall = impact_overall(base, exp)
    return population, overall, impact_per_base_cluster(population), impact_per_exp_cluster(population)


def warm_up(gib: float) -> None:
    """Touch memory once: on a VM, memory the guest never used is faulted in from the host
    at a few hundred MB/s, a cost a long-running worker pays once, not per computation."""
    block = np.ones(int(gib * 2**30 / 8))
    del block


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000_000)
    parser.add_argument("--clusters", type=int, default=3_000_000)
    parser.add_argument("--draws", type=int, default=100_000)
    parser.add_argument("--judged", type=int, default=100_000)
    parser.add_argument("--kinds", default="int-dense,int-random64,string")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm-gib", type=float, default=4.0, help="memory to touch once before timing")
    args = parser.parse_args()
    from sklearn.metrics.cluster import contingency_matrix

    rng = np.random.default_rng(args.seed)
    base_codes, exp_codes = make_codes(args.items, args.clusters, rng)
    warm_up(args.warm_gib)
    for kind in args.kinds.split(","):
        base, exp = as_ids(base_codes, kind, args.clusters, rng), as_ids(exp_codes, kind, args.clusters, rng)
        # Alternate over several rounds and quote the median of same-round ratios: the machine
        # is shared and noisy.
        rounds = []
        for _ in range(args.rounds):
            _, sk_seconds = timed(contingency_matrix, base, exp, sparse=True)
            _, overall_seconds = timed(impact_overall, base, exp)
            (population, overall, *_), tables_seconds = timed(impact_with_clusters, base, exp)
            rounds.append((sk_seconds, overall_seconds, tables_seconds))
        sk, ours, ours_tables = (np.array(column) for column in zip(*rounds))
        emit(
            ids=kind,
            items=args.items,
            base_clusters=len(population.base_labels),
            exp_clusters=len(population.exp_labels),
            affected_items=overall.affected_items,
            sklearn_contingency_s=sk.round(3).tolist(),
            impact_overall_s=ours.round(3).tolist(),
            impact_with_cluster_tables_s=ours_tables.round(3).tolist(),
            overall_over_sklearn_median=round(float(np.median(ours / sk)), 3),
            with_tables_over_sklearn_median=round(float(np.median(ours_tables / sk)), 3),
            sklearn_peak_MiB=peak_mib(contingency_matrix, base, exp, sparse=True),
            impact_overall_peak_MiB=peak_mib(impact_overall, base, exp),
            impact_with_tables_peak_MiB=peak_mib(impact_with_clusters, base, exp),
        )
        del base, exp
    for scheme in SCHEMES:
        _layout._CACHE.clear()  # time the first sample of a population: its layout included
        sample, cold = timed(sample_pairs, population, n_draws=args.draws, scheme=scheme, rng=rng)
        _, warm = timed(sample_pairs, population, n_draws=args.draws, scheme=scheme, rng=rng)
        _layout._CACHE.clear()
        emit(
            scheme=scheme,
            draws=args.draws,
            distinct_pairs=len(sample),
            sample_first_s=round(cold, 3),
            sample_again_s=round(warm, 3),
            sample_peak_MiB=peak_mib(sample_pairs, population, n_draws=args.draws, scheme=scheme, rng=rng),
        )
    emit(**_judged_sample(population, args.judged, rng))


def emit(**figures) -> None:
    print(json.dumps(figures), flush=True)


def judged_sample(population, n_judged: int, rng: np.random.Generator):
    """A ``jaccard`` sample with at least ``n_judged`` distinct judged pairs, and random verdicts."""
    draws = n_judged
    while True:
        sample = sample_pairs(population, n_draws=draws, scheme="jaccard", rng=rng)
        a, b = pairs_for_judgement(sample, rng=rng)
        if len(a) >= n_judged:
            break
        draws = int(draws * 1.5)
    a, b = a[:n_judged], b[:n_judged]
    return sample, verdicts_from_judgements(a, b, rng.integers(0, 2, len(a)))


def _judged_sample(population, n_judged: int, rng: np.random.Generator) -> dict:
    """Estimates from a sample with at least ``n_judged`` distinct judged pairs."""
    sample, verdicts = judged_sample(population, n_judged, rng)
    _, seconds = timed(estimate_quality, population, sample, verdicts)
    _, again = timed(estimate_quality, population, sample, verdicts)
    return {
        "estimate_draws": sample.n_draws,
        "judged_pairs": len(verdicts),
        "estimate_first_s": round(seconds, 3),
        "estimate_again_s": round(again, 3),
        "estimate_peak_MiB": peak_mib(estimate_quality, population, sample, verdicts),
    }


if __name__ == "__main__":
    main()
