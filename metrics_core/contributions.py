"""How much of an overall impact metric one group of items (a cluster, a slice value) carries.

A pointwise metric lifts to a set of items as the weight-weighted mean over the set
(``abcde-spec.md`` §2), so the overall value is the weighted sum of the groups' values
over any partition of the items: a group's *contribution* is its term of that sum. The
contributions of a partition (all Base clusters, say) add up to the overall value, which
is how a dashboard ranks the clusters that carry most of a change. Contributions share
the direction of their metric (for JaccardDistance: the larger, the more of the change).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["group_contribution"]


def group_contribution(*, metric: Any, weight: Any, total_weight: float) -> float | np.ndarray:
    """A group's share of an overall pointwise metric: ``metric(g) · weight(g) / weight(T)``.

    Parameters
    ----------
    metric : float or array_like
        The metric of the group (the weighted mean of its items' pointwise values), e.g.
        the JaccardDistance of a Base cluster. NaN (a metric undefined on the group) gives NaN.
    weight : float or array_like
        The group's weight (sum of its items' weights), ≥ 0; broadcast against ``metric``.
    total_weight : float
        ``weight(T)``, the weight of all items, > 0.

    Returns
    -------
    float or numpy.ndarray
        The contribution, a float for scalar input. Over a partition of the items the
        contributions sum to the overall metric.

    Examples
    --------
    A Base cluster of weight 2 whose JaccardDistance is 0.5, among items of total weight 8:

    >>> group_contribution(metric=0.5, weight=2.0, total_weight=8.0)
    0.125

    The clusters of a partition add up to the overall JaccardDistance:

    >>> shares = group_contribution(metric=[0.5, 0.0, 0.25], weight=[2.0, 2.0, 4.0], total_weight=8.0)
    >>> shares.tolist(), float(shares.sum())
    ([0.125, 0.0, 0.125], 0.25)
    """
    total = _positive_total(total_weight)
    m = _as_float("metric", metric)
    w = _as_float("weight", weight)
    if np.any(w < 0):
        raise ValueError("weight must be ≥ 0")
    try:
        # The group's share of the weight first: metric × weight underflows with weights near 1e-320.
        result = m * (w / total)
    except ValueError as exc:  # shapes that do not broadcast
        raise ValueError(f"metric and weight must have matching shapes: {exc}") from None
    return float(result) if np.ndim(result) == 0 else result


def _as_float(name: str, values: Any) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None


def _positive_total(total_weight: Any) -> float:
    if isinstance(total_weight, bool) or not isinstance(total_weight, (int, float, np.integer, np.floating)):
        raise ValueError(f"total_weight must be a positive number, got {total_weight!r}")
    total = float(total_weight)
    if not (np.isfinite(total) and total > 0):
        raise ValueError(f"total_weight must be a positive finite number, got {total_weight!r}")
    return total
