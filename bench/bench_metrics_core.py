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

import numpy as np
from _common import add_clustering_arguments, as_ids, emit, id_names, make_codes, parser, peak_mib, timed, warm_up

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


def impact_overall(base, exp):
    """What ``python -m metrics_core impact`` prints: factorisation and the overall metrics."""
    population = population_from_labels(base, exp)
    return population, impact_metrics(population)


def impact_with_clusters(base, exp):
    """The overall metrics and the per-Base-cluster and per-Exp-cluster tables."""
    population, overall = impact_overall(base, exp)
    return population, overall, impact_per_base_cluster(population), impact_per_exp_cluster(population)


def main() -> None:
    arguments = parser(__doc__)
    add_clustering_arguments(arguments, items=10_000_000, clusters=3_000_000)
    arguments.add_argument("--draws", type=int, default=100_000)
    arguments.add_argument("--judged", type=int, default=100_000)
    args = arguments.parse_args()
    from sklearn.metrics.cluster import contingency_matrix

    rng = np.random.default_rng(args.seed)
    base_codes, exp_codes = make_codes(args.items, args.clusters, rng)
    warm_up(args.warm_gib)
    for kind in args.kinds.split(","):
        base = as_ids(base_codes, id_names(kind, args.clusters, rng))
        exp = as_ids(exp_codes, id_names(kind, args.clusters, rng))
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
