"""BCubed (Bagga and Baldwin 1998; Amigo et al. 2009) and Expected Cluster Completeness.

Both look at the clustering from each item: the precision of item ``d`` is the share of
its predicted cluster's weight that is in its truth cluster, its recall the share of
its truth cluster's weight that is in its predicted cluster. All items of a cell share
these numbers, so everything is a sum over cells.
"""

from __future__ import annotations

import numpy as np

from .contingency import Contingency, exclusive_group_product


def pointwise_cells(table: Contingency) -> dict[str, np.ndarray]:
    """Precision, Recall and JaccardDistance of the items of each cell against the truth.

    ``Precision = w(C∩T)/w(C)``, ``Recall = w(C∩T)/w(T)``, ``JaccardDistance =
    1 − w(C∩T)/w(C∪T)`` with ``C``, ``T`` the item's predicted and truth clusters. Where
    the counts say a set equals the intersection the ratio is exactly 1, free of rounding.
    """
    both = table.weight
    pred, truth = table.col_weight[table.col], table.row_weight[table.row]
    pure = table.count == table.col_count[table.col]
    whole = table.count == table.row_count[table.row]
    return {
        "Precision": np.where(pure, 1.0, both / pred),
        "Recall": np.where(whole, 1.0, both / truth),
        "JaccardDistance": np.where(pure & whole, 0.0, 1.0 - both / (pred + truth - both)),
    }


def bcubed_measures(table: Contingency) -> dict[str, float]:
    """BCubed precision, recall and F1, item-averaged and category-averaged.

    Item-averaged: the weighted mean over items of their precision and recall. By
    category (the ECC article, §3.1, and yandex ``cluster_metrics``): the weighted mean
    within each truth cluster, then the plain mean over truth clusters. Each F1 is the
    harmonic mean of its averaged precision and recall.
    """
    pointwise = pointwise_cells(table)
    precision_mass = table.weight * pointwise["Precision"]
    recall_mass = table.weight * pointwise["Recall"]
    total = table.total_weight
    precision, recall = precision_mass.sum() / total, recall_mass.sum() / total
    by_category_precision = float(np.mean(table.row_sum(precision_mass) / table.row_weight))
    by_category_recall = float(np.mean(table.row_sum(recall_mass) / table.row_weight))
    return {
        "BCubedPrecision": float(precision),
        "BCubedRecall": float(recall),
        "BCubedF1": harmonic_mean(precision, recall),
        "BCubedPrecisionByCategory": by_category_precision,
        "BCubedRecallByCategory": by_category_recall,
        "BCubedF1ByCategory": harmonic_mean(by_category_precision, by_category_recall),
    }


def expected_cluster_completeness(table: Contingency) -> float:
    """Expected Cluster Completeness: the plain mean over truth clusters ``t`` of ECC(t).

    Each predicted cluster ``c`` is mapped to truth cluster ``t`` with probability
    ``P(c, t) = w(c∩t)/w(c)``, independently; ECC(t) is the expected best recall
    ``R(c, t) = w(c∩t)/w(t)`` among the clusters mapped to ``t`` (0 if none). With the
    clusters meeting ``t`` in decreasing recall, ``ECC(t) = Σ_k R_k P_k Π_{l<k} (1 − P_l)``
    (the ECC article, §3.2, and yandex ``cluster_metrics``).
    """
    order = np.lexsort((-table.weight, table.row))
    row, col = table.row[order], table.col[order]
    both = table.weight[order]
    precision = np.where(table.count[order] == table.col_count[col], 1.0, both / table.col_weight[col])
    recall = both / table.row_weight[row]
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    none_earlier = exclusive_group_product(1.0 - precision, starts)
    per_category = np.bincount(row, weights=recall * precision * none_earlier, minlength=table.shape[0])
    return float(per_category.mean())


def harmonic_mean(precision: float, recall: float) -> float:
    return float(2.0 * precision * recall / (precision + recall))
