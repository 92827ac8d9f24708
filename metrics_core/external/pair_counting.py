"""Measures that count pairs of distinct items: pairwise precision/recall/F1, Rand, ARI, FM.

With weights a pair of items ``d, e`` counts ``w_d · w_e`` (the unit-weight case counts
pairs); the pairs of a set weigh ``Σ_{d<e} w_d·w_e``, summed without the cancellation of
``(w² − s)/2`` (:func:`~.contingency.pair_masses`). Whether a set of pairs is empty is decided on
counts, never on floats.
The Adjusted Rand Index uses counts only: its chance correction is the hypergeometric
model of Hubert and Arabie (1985), which is about items, not weights.
"""

from __future__ import annotations

import math

import numpy as np

from .contingency import Contingency, pair_masses


def pair_counting_measures(table: Contingency) -> dict[str, float | None]:
    """Pairwise precision, recall and F1, Rand, Adjusted Rand and Fowlkes–Mallows indices.

    With ``same_both``, ``same_truth``, ``same_pred`` and ``all_pairs`` the pairs in the
    same cluster in both clusterings, in the truth, in the prediction, and all pairs:
    precision ``same_both/same_pred``, recall ``same_both/same_truth``, F1 their harmonic
    mean ``2·same_both/(same_truth + same_pred)``, Rand ``1 − (same_truth + same_pred −
    2·same_both)/all_pairs``, Fowlkes–Mallows ``same_both/√(same_truth·same_pred)``.
    A ratio over an empty set of pairs is None. Fowlkes–Mallows with exactly one empty
    side is 0: its non-empty side has recall or precision 0, so the geometric mean is 0
    whatever the undefined factor in [0, 1] (scikit-learn's value too).
    """
    counts = _pair_counts(table)
    same_both, cross_truth, cross_pred, cross_all = _pair_masses(table)
    # Pairs in the same truth cluster: in one cell, or in two cells of the cluster; and so on.
    same_truth, same_pred, all_pairs = same_both + cross_truth, same_both + cross_pred, same_both + cross_all
    has_truth, has_pred = counts["truth"] > 0, counts["pred"] > 0
    if has_truth and has_pred:
        fowlkes_mallows = _ratio(same_both, math.sqrt(same_truth * same_pred))
    else:
        fowlkes_mallows = 0.0 if has_truth or has_pred else None
    return {
        "PairwisePrecision": _ratio(same_both, same_pred) if has_pred else None,
        "PairwiseRecall": _ratio(same_both, same_truth) if has_truth else None,
        "PairwiseF1": _ratio(2.0 * same_both, same_truth + same_pred) if has_truth or has_pred else None,
        "RandIndex": _complement(_ratio(cross_truth + cross_pred, all_pairs)),
        "AdjustedRandIndex": _adjusted_rand(counts),
        "FowlkesMallows": fowlkes_mallows,
    }


def _ratio(numerator: float, denominator: float) -> float | None:
    """``numerator/denominator``; None when the pairs' mass is 0 though pairs exist (it no longer
    cancels, :func:`~.contingency.pair_masses`, but a product of weights could underflow)."""
    return numerator / denominator if denominator > 0 else None


def _complement(share: float | None) -> float | None:
    return None if share is None else 1.0 - share


def _adjusted_rand(counts: dict[str, int]) -> float | None:
    """Hubert and Arabie's ARI in exact integers: ``(index − expected)/(max − expected)``.

    ``expected = same_truth·same_pred/all`` and ``max = (same_truth + same_pred)/2``;
    multiplied through by ``2·all`` so that only the last division rounds. The
    denominator is 0 only when both clusterings are all singletons or both one cluster:
    there ARI is 0/0, None (scikit-learn returns 1.0 there).
    """
    both, truth, pred, total = counts["both"], counts["truth"], counts["pred"], counts["all"]
    denominator = total * (truth + pred) - 2 * truth * pred
    if denominator == 0:
        return None
    return 2 * (total * both - truth * pred) / denominator


def _pair_counts(table: Contingency) -> dict[str, int]:
    """Pairs of distinct items, as Python integers (their products exceed int64)."""
    n = table.n_items
    return {
        "both": _pairs_within(table.count),
        "truth": _pairs_within(table.row_count),
        "pred": _pairs_within(table.col_count),
        "all": n * (n - 1) // 2,
    }


def _pairs_within(sizes: np.ndarray) -> int:
    sizes = sizes.astype(np.int64, copy=False)
    return int((sizes * (sizes - 1) // 2).sum())


def _pair_masses(table: Contingency) -> tuple[float, float, float, float]:
    """Weighted pair masses: pairs in one cell, and pairs in two different cells of one truth
    cluster, of one predicted cluster, and anywhere; sums of products, never differences
    (``(w² − s)/2`` cancelled when one item outweighed the others 1e16 times: a precision of 2.0)."""
    if table.unit_weights:
        counts = _pair_counts(table)
        both = counts["both"]
        return float(both), float(counts["truth"] - both), float(counts["pred"] - both), float(counts["all"] - both)
    n_cells = len(table.weight)
    assert table.pair_weight is not None, "weights not all 1 have their pair masses"
    return (
        float(table.pair_weight.sum()),
        float(pair_masses(table.row, table.shape[0], table.weight).sum()),
        float(pair_masses(table.col, table.shape[1], table.weight).sum()),
        float(pair_masses(np.zeros(n_cells, dtype=np.int64), 1, table.weight).sum()),
    )
