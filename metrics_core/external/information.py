"""Normalised mutual information with the arithmetic-mean normalisation (NMI_sum)."""

from __future__ import annotations

import numpy as np

from .contingency import Contingency


def normalized_mutual_information(table: Contingency) -> float | None:
    """``MI(T, C) / ((H(T) + H(C))/2)`` over the weight distribution of the cells.

    None when both clusterings are a single cluster (both entropies are 0, so 0/0;
    scikit-learn returns 1.0 there). The logarithm base cancels out. The result is
    clipped to [0, 1], which only removes rounding: mathematically MI ≤ min(H(T), H(C)).
    """
    if table.shape == (1, 1):
        return None
    total = table.total_weight
    log_total = np.log(total)
    h_truth = _entropy(table.row_weight, total, log_total)
    h_pred = _entropy(table.col_weight, total, log_total)
    log_ratio = (
        np.log(table.weight) + log_total - np.log(table.row_weight)[table.row] - np.log(table.col_weight)[table.col]
    )
    mutual_information = float(np.dot(table.weight, log_ratio) / total)
    return min(1.0, max(0.0, mutual_information / ((h_truth + h_pred) / 2)))


def _entropy(weights: np.ndarray, total: float, log_total: float) -> float:
    return float(np.dot(weights, log_total - np.log(weights)) / total)
