"""Exact quality metrics when the Ideal clustering is known (a gold clustering).

With Ideal(i) known, every quality metric that ABCDE estimates from judgements can
be computed exactly (JDD eqs 5-8, 41-42, 56-59, 63-64; the rates of ABCDE):
simulations use this as the truth, and a gold clustering calibrates estimates.
Like the impact metrics, everything is a group-by over cells, here refined by the
Ideal cluster: weight(Base(i) ∩ Ideal(i)) and the like are sums over
(Base, Ideal), (Exp, Ideal) and (Base, Exp, Ideal) groups.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import as_1d
from .estimation import ESTIMATED_METRICS
from .population import Population, factorize_keys, factorize_labels


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
    if len(gold_labels) != pop.n_items:
        raise ValueError(f"gold_labels has {len(gold_labels)} values, expected {pop.n_items}")
    gold, gold_names = factorize_labels("gold_labels", gold_labels)
    n_gold = len(gold_names)
    with_base = _group_weight(pop, pop.base * n_gold + gold, len(pop.base_labels) * n_gold)
    with_exp = _group_weight(pop, pop.exp * n_gold + gold, len(pop.exp_labels) * n_gold)
    with_both = _group_weight(pop, pop.cell * n_gold + gold, len(pop.cell_weight) * n_gold)
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
    share = pop.weight / pop.total_weight
    if vantage is not None:
        share = np.where(as_1d("vantage", vantage).astype(bool), share, 0.0)
    return {name: float(np.dot(share, pointwise[name])) for name in ESTIMATED_METRICS}


def _group_weight(pop: Population, keys: np.ndarray, key_range: int) -> np.ndarray:
    """Total weight of each item's group, per item."""
    codes, groups = factorize_keys(keys, key_range)
    return np.bincount(codes, weights=pop.weight, minlength=len(groups))[codes]
