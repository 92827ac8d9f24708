"""Benchmark of the ground-truth measures (issue #7, part 5: acceptance figure).

Measures, on N labels with about K clusters and each kind of cluster id:
  * every ground-truth measure together (``external_measures``: factorisation, the sparse
    contingency table, BCubed, ECC, the set-matching, pair-counting and information measures)
    against scikit-learn's ``adjusted_rand_score`` alone, on the same labels in the same run,
    alternating over rounds; the median of the same-round ratios is what we quote (this
    machine is shared and noisy). Acceptance: ratio <= 1.0;
  * peak traced memory of ours (and, with --sklearn-peak, of scikit-learn's), in a pass of its
    own, since tracing slows allocation.

Two predictions of the truth:
  * ``merge``: 10% of items moved to random clusters and 2% of clusters merged into others, so
    the cluster counts differ and the pivoted accuracies are null (no matching to solve);
  * ``swap``: 10% of items swap clusters pairwise, so the cluster counts are equal and the
    pivoted accuracies solve a matching over about K clusters.

Run: .venv/bin/python bench/bench_external.py [--items 10000000] [--clusters 1000000]
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

import numpy as np

from metrics_core import external_measures


def make_truth(n_items: int, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """Truth clusters of random (Poisson) sizes."""
    return rng.integers(0, n_clusters, n_items)


def make_prediction(truth: np.ndarray, n_clusters: int, scenario: str, rng: np.random.Generator) -> np.ndarray:
    pred = truth.copy()
    if scenario == "merge":
        moved = rng.random(len(truth)) < 0.10
        pred[moved] = rng.integers(0, n_clusters, int(moved.sum()))
        merged = rng.random(n_clusters) < 0.02
        target = rng.integers(0, n_clusters, n_clusters)
        return np.where(merged[pred], target[pred], pred)
    swapped = rng.permutation(len(truth))[: len(truth) // 10]
    a, b = swapped[: len(swapped) // 2], swapped[len(swapped) // 2 :]
    pred[a], pred[b] = truth[b], truth[a]
    return pred


def as_ids(codes: np.ndarray, kind: str, names: np.ndarray | None) -> np.ndarray:
    """The same clustering with dense integer, random 64-bit integer or string ids."""
    return codes if kind == "int-dense" else names[codes]


def id_names(kind: str, n_clusters: int, rng: np.random.Generator) -> np.ndarray | None:
    if kind == "int-dense":
        return None
    if kind == "int-random64":
        return rng.choice(np.iinfo(np.int64).max, size=n_clusters, replace=False)
    return np.array([f"cluster-{k:08x}" for k in rng.permutation(n_clusters)], dtype=object)


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def peak_mib(function, *args, **kwargs) -> int:
    """Peak traced memory of one call (tracemalloc traces numpy's buffers), in a pass of its own."""
    tracemalloc.start()
    try:
        function(*args, **kwargs)
        return round(tracemalloc.get_traced_memory()[1] / 2**20)
    finally:
        tracemalloc.stop()


def warm_up(gib: float) -> None:
    """Touch memory once: on a VM, memory the guest never used is faulted in from the host
    at a few hundred MB/s, a cost a long-running worker pays once, not per computation."""
    block = np.ones(int(gib * 2**30 / 8))
    del block


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10_000_000)
    parser.add_argument("--clusters", type=int, default=1_000_000)
    parser.add_argument("--kinds", default="int-dense,int-random64,string")
    parser.add_argument("--scenarios", default="merge,swap")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm-gib", type=float, default=4.0, help="memory to touch once before timing")
    parser.add_argument("--sklearn-peak", action="store_true", help="also trace scikit-learn's peak memory (slow)")
    args = parser.parse_args()
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(args.seed)
    truth_codes = make_truth(args.items, args.clusters, rng)
    warm_up(args.warm_gib)
    for scenario in args.scenarios.split(","):
        pred_codes = make_prediction(truth_codes, args.clusters, scenario, rng)
        for kind in args.kinds.split(","):
            names = id_names(kind, args.clusters, rng)
            truth, pred = as_ids(truth_codes, kind, names), as_ids(pred_codes, kind, names)
            rounds = []
            for _ in range(args.rounds):
                sk_ari, sk_seconds = timed(adjusted_rand_score, truth, pred)
                measures, ours_seconds = timed(external_measures, truth, pred)
                rounds.append((sk_seconds, ours_seconds))
            sk, ours = (np.array(column) for column in zip(*rounds))
            figures = dict(
                scenario=scenario,
                ids=kind,
                items=args.items,
                truth_clusters=len(np.unique(truth_codes)),
                pred_clusters=len(np.unique(pred_codes)),
                sklearn_adjusted_rand_s=sk.round(3).tolist(),
                all_external_measures_s=ours.round(3).tolist(),
                ours_over_sklearn_median=round(float(np.median(ours / sk)), 3),
                same_ari=bool(abs(measures["AdjustedRandIndex"] - sk_ari) < 1e-9),
                null_measures=[name for name, value in measures.items() if value is None],
                ours_peak_MiB=peak_mib(external_measures, truth, pred),
            )
            if args.sklearn_peak:
                figures["sklearn_peak_MiB"] = peak_mib(adjusted_rand_score, truth, pred)
            emit(**figures)
            del truth, pred, names


def emit(**figures) -> None:
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
