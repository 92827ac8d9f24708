"""Quality estimates per slice of the items (any item attribute), with intervals.

A slice's estimates use the pairs whose vantage item is in the slice
(``estimate_quality(..., vantage=mask)``), which estimates the slice's *contribution* to
each overall metric; the slice's own metric is that contribution divided by the slice's
exact weight fraction (a pointwise metric lifts to a set as the weighted mean over it,
abcde-spec §2), so its interval scales with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import as_1d
from .estimation import estimate_quality
from .judgements import PairVerdicts
from .population import Population
from .results import QualityEstimates, json_number
from .sampling import PairSample


@dataclass(frozen=True)
class SliceQuality:
    """The estimates of one slice: its own metrics and its contributions to the overall ones."""

    label: Any
    items: int
    weight_fraction: float
    metric: QualityEstimates
    contribution: QualityEstimates

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "items": self.items,
            "weight_fraction": json_number(self.weight_fraction),
            "metric": self.metric.as_dict()["estimates"],
            "contribution": self.contribution.as_dict()["estimates"],
        }


def estimate_quality_by_slice(
    population: Population,
    sample: PairSample,
    verdicts: PairVerdicts,
    *,
    slice_of_item: Any,
    labels: Any,
    confidence: float = 0.95,
    labelled_draws: Any = None,
) -> list[SliceQuality]:
    """Estimates of every metric of the sample's scheme for each slice.

    Parameters
    ----------
    population, sample, verdicts
        As for :func:`estimate_quality`.
    slice_of_item : array-like of int, shape (N,)
        The slice code of each item, ``0 <= code < len(labels)``; ``-1`` for items in no slice.
    labels : sequence
        The label of each slice code; one result per label, in this order.
    confidence : float
        Level of the intervals.
    labelled_draws : array-like of int, optional
        Each sample row's draws in its batch's labelled prefix (abcde-spec §14), as for
        :func:`estimate_quality`; default every draw.

    Examples
    --------
    >>> import numpy as np
    >>> from metrics_core import population_from_labels, sample_pairs, verdicts_from_judgements
    >>> pop = population_from_labels([0, 0, 0, 1, 1], [0, 0, 1, 1, 1])
    >>> s = sample_pairs(pop, n_draws=500, rng=np.random.default_rng(0))
    >>> v = verdicts_from_judgements([1, 0, 2], [2, 2, 3], ["not_equivalent"] * 2 + ["equivalent"])
    >>> by = estimate_quality_by_slice(pop, s, v, slice_of_item=[0, 0, 0, 1, 1], labels=["x", "y"])
    >>> [(r.label, r.items, r.weight_fraction) for r in by]
    [('x', 3, 0.6), ('y', 2, 0.4)]
    >>> whole = estimate_quality(pop, s, v)["GoodSplitDistance"].value
    >>> bool(np.isclose(sum(r.contribution["GoodSplitDistance"].value for r in by), whole))
    True
    """
    codes = as_1d("slice_of_item", slice_of_item).astype(np.int64, copy=False)
    labels = list(labels)
    if len(codes) != population.n_items:
        raise ValueError(f"slice_of_item has {len(codes)} values, expected {population.n_items}")
    if len(codes) and (codes.min() < -1 or codes.max() >= len(labels)):
        raise ValueError(f"slice_of_item must be codes in [-1, {len(labels)}), one per label")
    in_slice = codes >= 0
    weight = np.bincount(codes[in_slice], weights=population.weight[in_slice], minlength=len(labels))
    items = np.bincount(codes[in_slice], minlength=len(labels))
    total = population.total_weight
    results = []
    for code, label in enumerate(labels):
        contribution = estimate_quality(
            population, sample, verdicts, confidence=confidence, vantage=codes == code, labelled_draws=labelled_draws
        )
        fraction = float(weight[code] / total) if total > 0 else 0.0
        factor = 1.0 / fraction if fraction > 0 else np.nan
        metric = QualityEstimates(
            scheme=contribution.scheme,
            confidence=contribution.confidence,
            estimates={name: estimate.scaled(factor) for name, estimate in contribution.estimates.items()},
        )
        results.append(SliceQuality(label, int(items[code]), fraction, metric, contribution))
    return results
