"""Benchmark of metrics_core on one machine (issue: metrics_core acceptance figures).

Measures, on N items with about K clusters and each kind of cluster id:
  * exact impact metrics (factorisation, overall, per Base and per Exp cluster)
    against scikit-learn's contingency_matrix(sparse=True) on the same labels,
    in the same run: the ratio is what we quote (this machine is shared and noisy);
  * S draws of each sampling scheme, beyond the impact metrics;
  * estimates from J judged pairs;
  * peak traced memory of each phase (tracemalloc traces numpy's buffers).

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
    tracemalloc.reset_peak()
    start = time.perf_counter()
    result = function(*args, **kwargs)
    seconds = time.perf_counter() - start
    return result, seconds, tracemalloc.get_traced_memory()[1] / 2**20


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
    report = {"items": args.items, "clusters": args.clusters, "runs": []}
    tracemalloc.start()
    for kind in args.kinds.split(","):
        base, exp = as_ids(base_codes, kind, args.clusters, rng), as_ids(exp_codes, kind, args.clusters, rng)
        # Alternate the two, several rounds: the first touch of fresh memory is slow on
        # a VM and the machine is shared, so we quote the median of same-round ratios.
        rounds = []
        for _ in range(args.rounds):
            _, sk_seconds, sk_peak = timed(contingency_matrix, base, exp, sparse=True)
            (population, overall, *_), ours_seconds, ours_peak = timed(impact_all, base, exp)
            rounds.append((sk_seconds, ours_seconds))
        ratios = sorted(ours / sk for sk, ours in rounds)
        sk_seconds = float(np.median([sk for sk, _ in rounds]))
        ours_seconds = float(np.median([ours for _, ours in rounds]))
        run = {
            "ids": kind,
            "base_clusters": len(population.base_labels),
            "exp_clusters": len(population.exp_labels),
            "affected_items": overall.affected_items,
            "sklearn_contingency_median_s": round(sk_seconds, 3),
            "sklearn_peak_MiB": round(sk_peak),
            "impact_median_s": round(ours_seconds, 3),
            "impact_peak_MiB": round(ours_peak),
            "impact_over_sklearn_median": round(float(np.median(ratios)), 3),
            "impact_over_sklearn_per_round": [round(r, 3) for r in ratios],
        }
        print(json.dumps(run), flush=True)
        report["runs"].append(run)
        del base, exp
    for scheme in SCHEMES:
        sample, seconds, peak = timed(sample_pairs, population, n_draws=args.draws, scheme=scheme, rng=rng)
        a, b = pairs_for_judgement(sample, rng=rng)
        verdicts = verdicts_from_judgements(a, b, rng.integers(0, 3, len(a)))
        _, est_seconds, est_peak = timed(estimate_quality, population, sample, verdicts)
        run = {
            "scheme": scheme,
            "draws": args.draws,
            "distinct_pairs": len(sample),
            "sample_s": round(seconds, 3),
            "sample_peak_MiB": round(peak),
            "judged_pairs": len(a),
            "estimate_s": round(est_seconds, 3),
            "estimate_peak_MiB": round(est_peak),
        }
        print(json.dumps(run), flush=True)
        report["runs"].append(run)
    judged = _judged_sample(population, args.judged, rng)
    run = {"estimate_from_judged_pairs": judged}
    print(json.dumps(run), flush=True)
    report["runs"].append(run)


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
    _, seconds, peak = timed(estimate_quality, population, sample, verdicts)
    return {"draws": sample.n_draws, "judged_pairs": len(a), "estimate_s": round(seconds, 3), "peak_MiB": round(peak)}


if __name__ == "__main__":
    main()
