"""The range of each estimate over deciding the *unsure* verdicts (spec §12)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..results import Estimate
from .estimator import Estimator
from .schemes import STRATUM_OF, delta_precision, scheme_estimates


def with_unsure_bounds(estimates: dict[str, Estimate], est: Estimator, scheme: str) -> dict[str, Estimate]:
    """Each estimate with ``unsure_low``/``unsure_high`` (spec §12), from point estimates only.

    Deciding unsure verdicts moves a class's share one way: its bounds are the estimates with
    every unsure verdict of the class *equivalent* and with every one *not equivalent*. A sum
    of classes adds its parts' bounds (the classes' unsure verdicts are different ones), and
    ΔPrecision, a mean of ``l_ij · 1(i≡j)`` over all classes, is highest with the unsure pairs
    that pull it up (positive label) equivalent and the others not, lowest the other way round.
    Its estimate, which leaves unsure pairs out, may lie just outside that range: a class mixes
    pairs of both pulls, and leaving one out weights up the others, which no verdict of it does.
    """
    if not est.d.has_unsure:
        # Every pass below would repeat the estimates' own arithmetic.
        return {name: replace(e, unsure_low=e.value, unsure_high=e.value) for name, e in estimates.items()}
    as_equivalent = scheme_estimates(est.resolved(1.0), scheme)
    as_not = scheme_estimates(est.resolved(0.0), scheme)
    # With unsure verdicts counted as judged the weights no longer depend on them, so ΔPrecision
    # moves with a pair's verdict by Σ over its rows of draws × label (its rows, one per
    # orientation, lie in one cell: they share the label's sign).
    d = est.d
    pull = np.bincount(d.unit, weights=d.draws * d.precision_label, minlength=len(d.unit_starts))
    positive = (pull > 0).astype(np.float64)
    stratum_of = STRATUM_OF[scheme]
    highest = delta_precision(est.resolved(positive), stratum_of).value
    lowest = delta_precision(est.resolved(1.0 - positive), stratum_of).value
    bounds = {"DeltaPrecision": _ordered(lowest, highest)}
    sums = ("GoodDistance", "BadDistance", "GoodMinusBadDistance")
    for name in estimates:
        if name not in bounds and name not in sums:
            bounds[name] = _ordered(as_equivalent[name].value, as_not[name].value)
    if "GoodMinusBadDistance" in estimates:
        # In the order the values are summed, so that without unsure verdicts they are the value.
        (gs_low, gs_high), (bs_low, bs_high), (gm_low, gm_high), (bm_low, bm_high) = (
            bounds[name] for name in ("GoodSplitDistance", "BadSplitDistance", "GoodMergeDistance", "BadMergeDistance")
        )
        bounds["GoodDistance"] = (gs_low + gm_low, gs_high + gm_high)
        bounds["BadDistance"] = (bs_low + bm_low, bs_high + bm_high)
        bounds["GoodMinusBadDistance"] = (
            (gs_low - bs_high) + (gm_low - bm_high),
            (gs_high - bs_low) + (gm_high - bm_low),
        )
    return {name: replace(e, unsure_low=bounds[name][0], unsure_high=bounds[name][1]) for name, e in estimates.items()}


def _ordered(first: float, second: float) -> tuple[float, float]:
    if math.isnan(first) or math.isnan(second):
        return math.nan, math.nan
    return min(first, second), max(first, second)
