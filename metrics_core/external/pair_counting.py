"""Measures that count pairs of distinct items: pairwise precision/recall/F1, Rand, ARI, FM.

With weights a pair of items ``d, e`` counts ``w_d · w_e`` (the unit-weight case counts
pairs); the pairs of a set of weight ``w`` whose items' squares sum to ``s`` weigh
``(w² − s)/2``. Whether a set of pairs is empty is decided on counts, never on floats.
The Adjusted Rand Index uses counts only: its chance correction is the hypergeometric
model of Hubert and Arabie (1985), which is about items, not weights.
"""

from __future__ import annotations

import math

import numpy as np

from .contingency import Contingency


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
    masses = _pair_masses(table)
    same_both, same_truth, same_pred, all_pairs = masses
    has_truth, has_pred = counts["truth"] > 0, counts["pred"] > 0
    if has_truth and has_pred:
        fowlkes_mallows = _ratio(same_both, math.sqrt(same_truth * same_pred))
    else:
        fowlkes_mallows = 0.0 if has_truth or has_pred else None
    return {
        "PairwisePrecision": _ratio(same_both, same_pred) if has_pred else None,
        "PairwiseRecall": _ratio(same_both, same_truth) if has_truth else None,
        "PairwiseF1": _ratio(2.0 * same_both, same_truth + same_pred) if has_truth or has_pred else None,
        "RandIndex": _complement(_ratio(same_truth + same_pred - 2.0 * same_both, all_pairs)),
        "AdjustedRandIndex": _adjusted_rand(counts),
        "FowlkesMallows": fowlkes_mallows,
    }


def _ratio(numerator: float, denominator: float) -> float | None:
    """``numerator/denominator``; None when the pairs' mass is lost to rounding (0 though pairs exist).

    That happens only with weights whose span approaches float64's precision (one item 1e16 times
    the others' weight): ``(w² − s)/2`` then cancels to nothing.
    """
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
    """Weighted pair masses: same cluster in both, in the truth, in the prediction, and all."""
    if table.unit_weights:
        counts = _pair_counts(table)
        return tuple(float(counts[name]) for name in ("both", "truth", "pred", "all"))  # type: ignore[return-value]
    squares_by_row, squares_by_col = table.row_sum(table.weight_sq), table.col_sum(table.weight_sq)
    total = table.total_weight
    # Rounding can leave a set's (w² − s)/2 slightly below 0: a pair mass is never negative.
    return (
        float(np.maximum(table.weight**2 - table.weight_sq, 0.0).sum() / 2),
        float(np.maximum(table.row_weight**2 - squares_by_row, 0.0).sum() / 2),
        float(np.maximum(table.col_weight**2 - squares_by_col, 0.0).sum() / 2),
        float(max(total**2 - table.weight_sq.sum(), 0.0) / 2),
    )
