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


def impact_all(base, exp):
    population = population_from_labels(base, exp)
    return (
        population,
        impact_metrics(population),
        impact_per_base_cluster(population),
        impact_per_exp_cluster(population),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000_000)
    parser.add_argument("--clusters", type=int, default=3_000_000)
    parser.add_argument("--draws", type=int, default=100_000)
    parser.add_argument("--judged", type=int, default=100_000)
    parser.add_argument("--kinds", default="int-dense,int-random64,string")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from sklearn.metrics.cluster import contingency_matrix

    rng = np.random.default_rng(args.seed)
    base_codes, exp_codes = make_codes(args.items, args.clusters, rng)
    for kind in args.kinds.split(","):
        base, exp = as_ids(base_codes, kind, args.clusters, rng), as_ids(exp_codes, kind, args.clusters, rng)
        # Alternate the two over several rounds and quote the median of same-round ratios:
        # the machine is shared, and first touches of fresh memory are slow on a VM.
        rounds = []
        for _ in range(args.rounds):
            _, sk_seconds = timed(contingency_matrix, base, exp, sparse=True)
            (population, overall, *_), ours_seconds = timed(impact_all, base, exp)
            rounds.append((sk_seconds, ours_seconds))
        ratios = [ours / sk for sk, ours in rounds]
        emit(
            ids=kind,
            items=args.items,
            base_clusters=len(population.base_labels),
            exp_clusters=len(population.exp_labels),
            affected_items=overall.affected_items,
            sklearn_contingency_s=[round(sk, 3) for sk, _ in rounds],
            impact_s=[round(ours, 3) for _, ours in rounds],
            impact_over_sklearn_median=round(float(np.median(ratios)), 3),
            sklearn_peak_MiB=peak_mib(contingency_matrix, base, exp, sparse=True),
            impact_peak_MiB=peak_mib(impact_all, base, exp),
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


def _judged_sample(population, n_judged: int, rng: np.random.Generator) -> dict:
    """Estimates from a sample with at least ``n_judged`` distinct judged pairs."""
    draws = n_judged
    while True:
        sample = sample_pairs(population, n_draws=draws, scheme="jaccard", rng=rng)
        a, b = pairs_for_judgement(sample, rng=rng)
        if len(a) >= n_judged:
            break
        draws = int(draws * 1.5)
    a, b = a[:n_judged], b[:n_judged]
    verdicts = verdicts_from_judgements(a, b, rng.integers(0, 2, len(a)))
    _, seconds = timed(estimate_quality, population, sample, verdicts)
    _, again = timed(estimate_quality, population, sample, verdicts)
    return {
        "estimate_draws": sample.n_draws,
        "judged_pairs": len(a),
        "estimate_first_s": round(seconds, 3),
        "estimate_again_s": round(again, 3),
        "estimate_peak_MiB": peak_mib(estimate_quality, population, sample, verdicts),
    }


if __name__ == "__main__":
    main()
