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

import numpy as np
from _common import (
    add_clustering_arguments,
    as_ids,
    emit,
    id_names,
    moved_and_merged,
    parser,
    peak_mib,
    timed,
    warm_up,
)

from metrics_core import external_measures


def make_truth(n_items: int, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """Truth clusters of random (Poisson) sizes."""
    return rng.integers(0, n_clusters, n_items)


def make_prediction(truth: np.ndarray, n_clusters: int, scenario: str, rng: np.random.Generator) -> np.ndarray:
    if scenario == "merge":
        return moved_and_merged(truth, n_clusters, rng, moved=0.10, merged=0.02)
    pred = truth.copy()
    swapped = rng.permutation(len(truth))[: len(truth) // 10]
    a, b = swapped[: len(swapped) // 2], swapped[len(swapped) // 2 :]
    pred[a], pred[b] = truth[b], truth[a]
    return pred


def main() -> None:
    arguments = parser(__doc__)
    add_clustering_arguments(arguments, items=10_000_000, clusters=1_000_000)
    arguments.add_argument("--scenarios", default="merge,swap")
    arguments.add_argument("--sklearn-peak", action="store_true", help="also trace scikit-learn's peak memory (slow)")
    args = arguments.parse_args()
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(args.seed)
    truth_codes = make_truth(args.items, args.clusters, rng)
    warm_up(args.warm_gib)
    for scenario in args.scenarios.split(","):
        pred_codes = make_prediction(truth_codes, args.clusters, scenario, rng)
        for kind in args.kinds.split(","):
            names = id_names(kind, args.clusters, rng)
            truth, pred = as_ids(truth_codes, names), as_ids(pred_codes, names)
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


if __name__ == "__main__":
    main()
