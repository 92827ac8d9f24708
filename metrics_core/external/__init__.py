"""Ground-truth (external) measures: a predicted clustering against a gold clustering.

Conventions:

- Every measure is higher-is-better and equals 1.0 for a prediction identical to the
  truth (up to relabelling). ``AdjustedRandIndex`` is 0 in expectation for a random
  prediction and may be negative; the others lie in [0, 1].
- A measure that is undefined for the input is ``None``, never a made-up number: the
  pairwise and Rand measures with no pair to count, ``AdjustedRandIndex`` when both
  clusterings are all singletons or both one cluster (0/0; scikit-learn says 1.0), ``NMI``
  when both are one cluster (0/0; scikit-learn says 1.0), the pivoted accuracies when the
  cluster counts differ (as in genieclust) and the normalised ones with one cluster.
- Weights: every measure is weighted (an item counts its weight; a pair of items the
  product of their weights; NMI uses the weight distribution) except
  ``AdjustedRandIndex``, whose chance correction (Hubert and Arabie 1985) counts items.
  ``ExpectedClusterCompleteness`` and the ``...ByCategory`` measures weight items within
  a truth cluster and then give every truth cluster the same say.
- Asymmetric measures take the first argument as the truth: BCubed, ECC, Purity and its
  inverse, FMeasure, pairwise precision and recall, NormalizedClusteringAccuracy.
- Everything comes from one sparse contingency table (:mod:`.contingency`), whose size
  is the number of nonzero cells, never the product of the cluster counts.

Sources: Amigo et al. 2009 (BCubed, Purity, Inverse Purity, F-measure, the formal
constraints), the ECC article and yandex ``cluster_metrics`` (category-averaged BCubed,
ECC), the external-validity chapter and genieclust (pivoted accuracies, Rand, ARI, FM,
NMI_sum).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..population import Population, population_from_labels
from .bcubed import bcubed_measures, expected_cluster_completeness, pointwise_cells
from .contingency import Contingency, contingency_from_population
from .information import normalized_mutual_information
from .pair_counting import pair_counting_measures
from .set_matching import pivoted_accuracies, purity_measures

EXTERNAL_MEASURES = (
    "BCubedPrecision",
    "BCubedRecall",
    "BCubedF1",
    "BCubedPrecisionByCategory",
    "BCubedRecallByCategory",
    "BCubedF1ByCategory",
    "ExpectedClusterCompleteness",
    "Purity",
    "InversePurity",
    "FMeasure",
    "PairwisePrecision",
    "PairwiseRecall",
    "PairwiseF1",
    "RandIndex",
    "AdjustedRandIndex",
    "FowlkesMallows",
    "NMI",
    "PivotedAccuracy",
    "NormalizedPivotedAccuracy",
    "NormalizedClusteringAccuracy",
)
POINTWISE_EXTERNAL_METRICS = ("Precision", "Recall", "JaccardDistance")

__all__ = [
    "EXTERNAL_MEASURES",
    "POINTWISE_EXTERNAL_METRICS",
    "Contingency",
    "contingency_from_population",
    "external_measures",
    "external_measures_from_population",
    "external_per_item",
]


def external_measures(truth_labels: Any, pred_labels: Any, *, weights: Any = None) -> dict[str, float | None]:
    """Every ground-truth measure of a predicted clustering against the truth.

    Parameters
    ----------
    truth_labels, pred_labels : array-like of length N
        Truth (gold) and predicted cluster label of each item (integers, strings or
        any hashable values; numpy, pyarrow or list).
    weights : array-like of float, optional
        Positive finite weight of each item; 1.0 when omitted.

    Returns
    -------
    dict of str to float or None
        The names of ``EXTERNAL_MEASURES`` in that order; None where undefined.

    Examples
    --------
    The worked example of the ECC article (§3) and of yandex ``cluster_metrics``: truth
    {a,b,c,d,e}, {f,g,h,i}; prediction {a,b,c,d,g}, {e,f,h,i}.

    >>> m = external_measures(list("111112222"), list("111122122"))
    >>> [round(m[k], 5) for k in ("ExpectedClusterCompleteness", "BCubedPrecisionByCategory",
    ...                           "BCubedRecallByCategory", "BCubedF1ByCategory")]
    [0.6125, 0.65125, 0.6525, 0.65187]
    """
    return external_measures_from_population(_population(truth_labels, pred_labels, weights))


def external_measures_from_population(population: Population) -> dict[str, float | None]:
    """:func:`external_measures` of a population whose Base is the truth and Exp the prediction."""
    table = contingency_from_population(population)
    found: dict[str, float | None] = {
        **bcubed_measures(table),
        "ExpectedClusterCompleteness": expected_cluster_completeness(table),
        **purity_measures(table),
        **pair_counting_measures(table),
        "NMI": normalized_mutual_information(table),
        **pivoted_accuracies(table),
    }
    return {name: found[name] for name in EXTERNAL_MEASURES}


def external_per_item(truth_labels: Any, pred_labels: Any, *, weights: Any = None) -> dict[str, np.ndarray]:
    """Pointwise Precision, Recall and JaccardDistance of every item against the truth.

    With ``C`` the item's predicted cluster and ``T`` its truth cluster:
    ``Precision = w(C∩T)/w(C)``, ``Recall = w(C∩T)/w(T)`` and ``JaccardDistance =
    1 − w(C∩T)/w(C∪T)``. Their weighted means over the items are ``BCubedPrecision`` and
    ``BCubedRecall`` (weighted BCubed) and the mean JaccardDistance to the truth.

    Examples
    --------
    >>> per_item = external_per_item(["t", "t", "u"], [1, 1, 1], weights=[1.0, 1.0, 2.0])
    >>> {name: values.tolist() for name, values in per_item.items()}
    {'Precision': [0.5, 0.5, 0.5], 'Recall': [1.0, 1.0, 1.0], 'JaccardDistance': [0.5, 0.5, 0.5]}
    """
    population = _population(truth_labels, pred_labels, weights)
    cells = pointwise_cells(contingency_from_population(population))
    return {name: cells[name][population.cell] for name in POINTWISE_EXTERNAL_METRICS}


def _population(truth_labels: Any, pred_labels: Any, weights: Any) -> Population:
    """The factorised clusterings, with argument errors naming this module's arguments."""
    try:
        return population_from_labels(truth_labels, pred_labels, weights)
    except ValueError as exc:
        renamed = re.sub(r"\bbase\b", "truth_labels", re.sub(r"\bexp\b", "pred_labels", str(exc)))
        raise ValueError(renamed) from None
