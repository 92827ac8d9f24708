"""Set-matching measures: Purity, Inverse Purity, F-measure and the pivoted accuracies.

Purity, Inverse Purity and F-measure follow Amigo et al. (2009, §4.1); the accuracies
follow genieclust's ``compare_partitions`` (Gagolewski, "Normalised clustering accuracy",
2025): the pivoted accuracy ``A = max_σ Σ_i c[i, σ(i)]/n``, the normalised pivoted
accuracy ``(A·k − 1)/(k − 1)`` and the normalised clustering accuracy
``(max_σ Σ_i c[i, σ(i)]/c[i, ·] − 1)/(k − 1)``, σ a bijection between the ``k`` truth
and ``k`` predicted clusters. Like genieclust, they are defined only when both
clusterings have the same number of clusters (None otherwise), and the normalised ones
need ``k ≥ 2``.
"""

from __future__ import annotations

import warnings

from .assignment import MAX_BLOCK_SIDE, max_matching_total
from .contingency import Contingency, group_max

ACCURACIES = ("PivotedAccuracy", "NormalizedPivotedAccuracy", "NormalizedClusteringAccuracy")


def purity_measures(table: Contingency) -> dict[str, float]:
    """Purity, Inverse Purity and F-measure (van Rijsbergen's F of each truth cluster's best match).

    ``Purity = Σ_c max_t w(c∩t) / W``; ``InversePurity = Σ_t max_c w(c∩t) / W``;
    ``FMeasure = Σ_t w(t)/W · max_c F(t, c)`` with ``F(t, c) = 2·w(c∩t)/(w(c) + w(t))``,
    the harmonic mean of ``w(c∩t)/w(c)`` and ``w(c∩t)/w(t)``.
    """
    total = table.total_weight
    row_weight, col_weight = table.row_weight[table.row], table.col_weight[table.col]
    f_mass = 2.0 * table.weight * row_weight / (row_weight + col_weight)  # w(t) · F(t, c)
    return {
        "Purity": float(group_max(table.col, table.shape[1], table.weight).sum() / total),
        "InversePurity": float(group_max(table.row, table.shape[0], table.weight).sum() / total),
        "FMeasure": float(group_max(table.row, table.shape[0], f_mass).sum() / total),
    }


def pivoted_accuracies(table: Contingency) -> dict[str, float | None]:
    """PivotedAccuracy, NormalizedPivotedAccuracy and NormalizedClusteringAccuracy (weighted)."""
    k, n_cols = table.shape
    result: dict[str, float | None] = dict.fromkeys(ACCURACIES)
    if n_cols != k:
        return result
    best = max_matching_total(table.row, table.col, table.weight, k)
    if best is not None:
        accuracy = best / table.total_weight
        result["PivotedAccuracy"] = accuracy
        result["NormalizedPivotedAccuracy"] = (accuracy * k - 1.0) / (k - 1.0) if k > 1 else None
    if k > 1:
        share_of_row = table.weight / table.row_weight[table.row]
        best_share = max_matching_total(table.row, table.col, share_of_row, k)
        if best_share is not None:
            result["NormalizedClusteringAccuracy"] = (best_share - 1.0) / (k - 1.0)
    if best is None or (k > 1 and result["NormalizedClusteringAccuracy"] is None):
        warnings.warn(
            f"the cluster matching left a block of more than {MAX_BLOCK_SIDE} clusters on each side; "
            "the pivoted accuracies that need it are reported as None",
            RuntimeWarning,
            stacklevel=3,
        )
    return result
