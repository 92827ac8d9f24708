"""ΔRecall and IQ over an assumed ``Recall_Base`` range, and their sequence and unsure bounds (abcde-spec §14).

The bootstrap interval of the diagram is conditional on ``Recall_Base(AffectedItems)``, which the
sample does not measure. Over a range of it (the owner's; default 40-80%) the interval reported is
the union of the bootstrap intervals at every ``Recall_Base`` of the range (a grid of step at most
:data:`RANGE_STEP`, both ends included), and the value's own interval.

The confidence sequence and the unsure bounds are propagated through the same equations
(:func:`~metrics_core.derived.equations.diagram_arrays`): the extremes of ΔRecall and IQ over the
box of their inputs' bounds. The inputs are the split share (GoodSplitRate; BadSplitRate is the
exact SplitRate minus it), the merge share (GoodMergeRate, likewise) and ΔPrecision;
AffectedWeightFraction, WeightFractionOfBaseCluster and JaccardDistance are exact. ΔRecall and IQ
are **not** monotone in these inputs (the clips of eqs 56 and 60, the ratios of eqs 61-63 and
79-83), so the extremes are taken on a grid of :data:`BOX_POINTS` points per input, corners
included, not at the corners alone; the sequence also over the ``Recall_Base`` grid of the range,
the unsure bounds at the value's ``Recall_Base`` only (without unsure verdicts they are the value).
The sequence is never narrower than the interval (the hull of both). It is a propagation of each
input's own sequence, as spec §14 asks; no joint level over the three inputs is claimed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..results import Estimate, QualityEstimates
from .equations import diagram_arrays

RANGE_STEP = 0.01  # largest step of the Recall_Base grid of a range
BOX_POINTS = 9  # grid points per input of the box, both ends included
DEFAULT_RECALL_BASE_RANGE = (0.4, 0.8)
_OUTPUTS = ("DeltaRecall", "IQ")


def recall_base_grid(low: float, high: float) -> np.ndarray:
    """``Recall_Base`` values spanning ``[low, high]``, both ends included, steps ≤ :data:`RANGE_STEP`."""
    if high <= low:
        return np.array([low])
    grid = np.linspace(low, high, max(2, math.ceil((high - low) / RANGE_STEP - 1e-9) + 1))
    # Rounded so that round values (0.6) are exactly the parameter ``recall_base=0.6`` gives.
    grid[1:-1] = np.round(grid[1:-1], 12)
    return grid


def percentile_union(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    """The union of the percentile intervals of each column of ``replicates`` (n_boot × grid).

    A column with fewer than two finite replicates has no interval; with none at all, NaN.
    """
    tail = (1.0 - confidence) / 2.0
    low, high = math.inf, -math.inf
    for column in np.atleast_2d(replicates.T):
        defined = column[np.isfinite(column)]
        if len(defined) >= 2:
            q_low, q_high = np.quantile(defined, [tail, 1.0 - tail])
            low, high = min(low, float(q_low)), max(high, float(q_high))
    return (low, high) if low <= high else (math.nan, math.nan)


def propagated_extremes(
    quality: QualityEstimates,
    exact: Mapping[str, float],
    bounds: tuple[str, str],
    recall_bases: np.ndarray,
    precision_base: float | None,
) -> dict[str, tuple[float, float]]:
    """The least and greatest ΔRecall and IQ over the box of the inputs' ``bounds`` × ``recall_bases``.

    ``bounds`` names the inputs' fields: ``("cs_low", "cs_high")`` or ``("unsure_low",
    "unsure_high")``. NaN when an input's bound is undefined.
    """
    axes = {}
    for good, bad, rate in (
        ("GoodSplitRate", "BadSplitRate", "SplitRate"),
        ("GoodMergeRate", "BadMergeRate", "MergeRate"),
    ):
        axes[good] = _share_axis(quality[good], quality[bad], float(exact[rate]), bounds)
    d = quality["DeltaPrecision"]
    axes["DeltaPrecision"] = _axis(d.value, getattr(d, bounds[0]), getattr(d, bounds[1]))
    split_axis, merge_axis, precision_axis = axes["GoodSplitRate"], axes["GoodMergeRate"], axes["DeltaPrecision"]
    if split_axis is None or merge_axis is None or precision_axis is None:
        return {name: (math.nan, math.nan) for name in _OUTPUTS}
    split, merge, precision, recall_base = np.meshgrid(
        split_axis, merge_axis, precision_axis, recall_bases, indexing="ij", sparse=True
    )
    arrays = diagram_arrays(
        affected_weight_fraction=exact["AffectedWeightFraction"],
        good_split_rate=split,
        # The Bad rate moves against the Good one: their sum is the exact rate (at the value, exactly the estimates).
        bad_split_rate=quality["BadSplitRate"].value - (split - quality["GoodSplitRate"].value),
        good_merge_rate=merge,
        bad_merge_rate=quality["BadMergeRate"].value - (merge - quality["GoodMergeRate"].value),
        delta_precision=precision,
        weight_fraction_of_base_cluster=exact["WeightFractionOfBaseCluster"],
        jaccard_distance=exact["JaccardDistance"],
        recall_base=recall_base,
        precision_base=precision_base,
    )
    out = {}
    for name in _OUTPUTS:
        values = np.asarray(arrays[name], dtype=np.float64)
        finite = values[np.isfinite(values)]
        out[name] = (float(finite.min()), float(finite.max())) if finite.size else (math.nan, math.nan)
    return out


def _share_axis(good: Estimate, bad: Estimate, rate: float, bounds: tuple[str, str]) -> np.ndarray | None:
    """Grid of the Good rate: its own bounds and those implied by the Bad rate's, clipped to [0, rate]."""
    if all(getattr(e, b) == e.value for e in (good, bad) for b in bounds):
        return np.array([good.value])  # no width (no unsure verdict): exactly the value, not rounded through rate
    lows = (getattr(good, bounds[0]), rate - getattr(bad, bounds[1]))
    highs = (getattr(good, bounds[1]), rate - getattr(bad, bounds[0]))
    if any(math.isnan(x) for x in (*lows, *highs)):
        return None
    return _axis(good.value, max(0.0, min(lows)), min(rate, max(highs)))


def _axis(value: float, low: float, high: float) -> np.ndarray | None:
    """:data:`BOX_POINTS` points from ``low`` to ``high``; the value alone when the range is that point."""
    if any(math.isnan(x) for x in (value, low, high)):
        return None
    if low == high == value:
        return np.array([value])
    return np.linspace(min(low, value), max(high, value), BOX_POINTS)
