"""Exact quality metrics when the Ideal clustering is known (a gold clustering).

With Ideal(i) known, every quality metric that ABCDE estimates from judgements can
be computed exactly (JDD eqs 5-8, 41-42, 56-59, 63-64; the rates of ABCDE):
simulations use this as the truth, and a gold clustering calibrates estimates.
Like the impact metrics, everything is a group-by over cells, here refined by the
Ideal cluster: weight(Base(i) ∩ Ideal(i)) and the like are sums over
(Base, Ideal), (Exp, Ideal) and (Base, Exp, Ideal) groups.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

import numpy as np

from ._validation import as_1d
from .estimation import ESTIMATED_METRICS
from .factorize import factorize_keys, factorize_labels
from .impact import cell_pointwise_metrics
from .population import Population


def quality_from_gold(population: Population, gold_labels: Any, *, vantage: Any = None) -> dict[str, float]:
    """The exact value of every quality metric ABCDE estimates, given the Ideal clustering.

    Parameters
    ----------
    population : Population
    gold_labels : array-like of length N
        The Ideal cluster of each item: ``i ≡ j`` iff they share a label.
    vantage : array-like of bool, optional
        Sum only over vantage items in this mask (a slice's contribution, matching
        ``estimate_quality(..., vantage=mask)``).

    Returns
    -------
    dict of str to float
        Every name of ``ESTIMATED_METRICS``.

    Examples
    --------
    Base {a,b,c}, Exp {a,b},{c}; Ideal {a,b},{c}: the split of c is good.

    >>> from metrics_core import population_from_labels
    >>> pop = population_from_labels([0, 0, 0], [0, 0, 1])
    >>> q = quality_from_gold(pop, ["x", "x", "y"])
    >>> round(q["GoodSplitDistance"], 4), q["BadSplitDistance"], round(q["DeltaPrecision"], 4)
    (0.4444, 0.0, 0.4444)
    """
    pop = population
    g = _gold_weights(pop, gold_labels)
    with_base, with_exp, with_both = g["with_base"], g["with_exp"], g["with_both"]
    sets = {name: values[pop.cell] for name, values in pop.cell_sets.items()}
    split_equivalent = np.where(sets["split"] > 0, np.maximum(with_base - with_both, 0.0), 0.0)
    merge_equivalent = np.where(sets["merge"] > 0, np.maximum(with_exp - with_both, 0.0), 0.0)
    affected = pop.cell_affected()[pop.cell]
    union, base, exp = sets["union"], sets["base"], sets["exp"]
    pointwise = {
        "GoodSplitDistance": (sets["split"] - split_equivalent) / union,
        "BadSplitDistance": split_equivalent / union,
        "GoodMergeDistance": merge_equivalent / union,
        "BadMergeDistance": (sets["merge"] - merge_equivalent) / union,
        "AffectedGoodIndex": np.where(affected, with_both / union, 0.0),
        "AffectedBadIndex": np.where(affected, (sets["both"] - with_both) / union, 0.0),
        "DeltaPrecision": np.where(affected, with_exp / exp - with_base / base, 0.0),
        "GoodSplitRate": (sets["split"] - split_equivalent) / base,
        "BadSplitRate": split_equivalent / base,
        "GoodMergeRate": merge_equivalent / exp,
        "BadMergeRate": (sets["merge"] - merge_equivalent) / exp,
    }
    pointwise["GoodDistance"] = pointwise["GoodSplitDistance"] + pointwise["GoodMergeDistance"]
    pointwise["BadDistance"] = pointwise["BadSplitDistance"] + pointwise["BadMergeDistance"]
    pointwise["GoodMinusBadDistance"] = pointwise["GoodDistance"] - pointwise["BadDistance"]
    share = pop.weight / pop.total_weight
    if vantage is not None:
        share = np.where(as_1d("vantage", vantage).astype(bool), share, 0.0)
    return {name: float(np.dot(share, pointwise[name])) for name in ESTIMATED_METRICS}


def truth_from_gold(population: Population, gold_labels: Any) -> dict[str, float]:
    """The true values of what MQM approximates from a diagram, given the Ideal clustering.

    ``DeltaRecall`` = Recall_Exp(T) − Recall_Base(T) with Recall_C(i) = weight(C(i) ∩
    Ideal(i)) / weight(Ideal(i)) (MQM eq 2); ``IQ`` = (JD(Base, Ideal) − JD(Exp, Ideal)) /
    JD(Base, Exp) (MQM eq 77) with each JD a weighted mean of pointwise Jaccard distances
    (NaN when Base = Exp); ``RecallBase`` and ``PrecisionBase`` are Recall_Base and
    Precision_Base of the affected items, the parameters of MQM §3.3's diagram; also
    ``RecallBaseAll``, ``RecallExpAll``, ``PrecisionBaseAll`` and ``PrecisionExpAll`` of T,
    and the two distances to Ideal.

    Examples
    --------
    Base {a,b,c},{d}; Exp {a,b},{c,d}; Ideal {a,b},{c,d}: Exp is Ideal.

    >>> from metrics_core import population_from_labels
    >>> pop = population_from_labels(["B1", "B1", "B1", "B2"], ["E1", "E1", "E2", "E2"])
    >>> t = truth_from_gold(pop, ["x", "x", "y", "y"])
    >>> t["DeltaRecall"], round(t["IQ"], 12), t["RecallBase"], round(t["PrecisionBase"], 4)
    (0.25, 1.0, 0.75, 0.6667)
    """
    pop = population
    g = _gold_weights(pop, gold_labels)
    base, exp = pop.base_weight[pop.base], pop.exp_weight[pop.exp]
    recall_base, recall_exp = g["with_base"] / g["ideal"], g["with_exp"] / g["ideal"]
    jd_base = 1.0 - g["with_base"] / (base + g["ideal"] - g["with_base"])
    jd_exp = 1.0 - g["with_exp"] / (exp + g["ideal"] - g["with_exp"])
    affected = pop.cell_affected()[pop.cell]
    mean = lambda values, where=None: _weighted_mean(pop.weight, values, where)  # noqa: E731
    jd_change = mean(cell_pointwise_metrics(pop)["JaccardDistance"][pop.cell])
    distance_base, distance_exp = mean(jd_base), mean(jd_exp)
    return {
        "DeltaRecall": mean(recall_exp) - mean(recall_base),
        "IQ": (distance_base - distance_exp) / jd_change if jd_change > 0 else math.nan,
        "RecallBase": min(mean(recall_base, affected), 1.0),
        "PrecisionBase": min(mean(g["with_base"] / base, affected), 1.0),
        "RecallBaseAll": mean(recall_base),
        "RecallExpAll": mean(recall_exp),
        "PrecisionBaseAll": mean(g["with_base"] / base),
        "PrecisionExpAll": mean(g["with_exp"] / exp),
        "JaccardDistanceBaseIdeal": distance_base,
        "JaccardDistanceExpIdeal": distance_exp,
    }


# The same quantity computed two ways (an estimate's weighted sums, the gold's sums over cells)
# agrees only to the last bits: an estimate and an interval end clipped at 0 or 1 are compared
# with the truth within this (relative, with an absolute floor near 0).
TRUTH_REL_TOLERANCE, TRUTH_ABS_TOLERANCE = 1e-9, 1e-12


def estimate_against_truth(*, value: float | None, low: float | None, high: float | None, exact: float | None) -> dict:
    """An estimate beside the exact value: its ``error`` and whether its interval ``holds`` it.

    Both within floating-point tolerance: an error smaller than that is 0, and an exact value
    that ties an interval end (a bound clipped at 0 or 1, say) is held. ``None`` where a number
    is missing or not finite.

    Examples
    --------
    >>> estimate_against_truth(value=1.0, low=0.9, high=1.0, exact=1.0000000000000002)
    {'error': 0.0, 'holds': True}
    >>> estimate_against_truth(value=0.5, low=0.4, high=0.6, exact=0.61)
    {'error': -0.10999999999999999, 'holds': False}
    """
    error = None
    if _known(value) and _known(exact):
        error = 0.0 if _tie(value, exact) else value - exact
    holds = None
    if _known(low) and _known(high) and _known(exact):
        holds = low <= exact <= high or _tie(exact, low) or _tie(exact, high)
    return {"error": error, "holds": holds}


def _known(x: float | None) -> TypeGuard[float]:
    return x is not None and math.isfinite(x)


def _tie(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TRUTH_REL_TOLERANCE, abs_tol=TRUTH_ABS_TOLERANCE)


def _gold_weights(pop: Population, gold_labels: Any) -> dict[str, np.ndarray]:
    """Per item: weight(Base(i) ∩ Ideal(i)), (Exp ∩ Ideal), (Base ∩ Exp ∩ Ideal) and weight(Ideal(i))."""
    if len(gold_labels) != pop.n_items:
        raise ValueError(f"gold_labels has {len(gold_labels)} values, expected {pop.n_items}")
    gold, gold_names = factorize_labels("gold_labels", gold_labels)
    n_gold = len(gold_names)
    # The population's codes may be int32: widen them before they are multiplied.
    base, exp, cell = (codes.astype(np.int64) for codes in (pop.base, pop.exp, pop.cell))
    return {
        "with_base": _group_weight(pop, base * n_gold + gold, len(pop.base_labels) * n_gold),
        "with_exp": _group_weight(pop, exp * n_gold + gold, len(pop.exp_labels) * n_gold),
        "with_both": _group_weight(pop, cell * n_gold + gold, len(pop.cell_weight) * n_gold),
        "ideal": np.bincount(gold, weights=pop.weight, minlength=n_gold)[gold],
    }


def _weighted_mean(weight: np.ndarray, values: np.ndarray, where: np.ndarray | None = None) -> float:
    if where is not None:
        weight, values = weight[where], values[where]
    total = weight.sum()
    return float(np.dot(weight, values) / total) if total > 0 else math.nan


def _group_weight(pop: Population, keys: np.ndarray, key_range: int) -> np.ndarray:
    """Total weight of each item's group, per item."""
    codes, groups = factorize_keys(keys, key_range)
    return np.bincount(codes, weights=pop.weight, minlength=len(groups))[codes]
