"""A gold clustering beside the derived metrics: the truth, and the parameters that would have matched it.

MQM §3.3 calibrates the 60%/80% rule against changes whose ΔRecall is known; with a
gold clustering of the experiment's items the same check runs on one experiment. The
truth comes from :func:`metrics_core.gold.truth_from_gold`; the diagram is the one the
estimates (or the exact gold metrics) give.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..results import json_number
from .diagram import AffectedItemDiagram

# Fine enough that linear interpolation between grid points is well below any interval's width.
MATCH_GRID = np.linspace(0.001, 1.0, 1000)


def recall_base_matching(
    diagram: AffectedItemDiagram, delta_recall: float, grid: np.ndarray = MATCH_GRID
) -> list[float]:
    """The ``Recall_Base(AffectedItems)`` values at which the Variant 1 diagram's ΔRecall(T) is ``delta_recall``.

    Searched on the valid part of the curve (no clip, eq 58 respected), by linear
    interpolation between grid points where the difference changes sign; usually one
    value (ΔRecall of Variant 1 is monotone in Recall_Base), none when the true ΔRecall
    is out of the curve's reach.

    Examples
    --------
    >>> from metrics_core import affected_item_diagram
    >>> d = affected_item_diagram(affected_weight_fraction=1.0, good_split_rate=1/3,
    ...     bad_split_rate=0.0, good_merge_rate=1/4, bad_merge_rate=0.0, delta_precision=1/3,
    ...     weight_fraction_of_base_cluster=1/2, jaccard_distance=23/48)
    >>> [round(r, 6) for r in recall_base_matching(d, 0.25)]
    [0.75]
    """
    if math.isnan(delta_recall):
        return []
    curve = diagram.with_parameters(recall_base=None, precision_base=None).recall_base_curve(grid)
    gap = np.where(curve.valid, curve.delta_recall - delta_recall, np.nan)
    matches = []
    for k in range(len(grid)):
        if gap[k] == 0:
            matches.append(float(grid[k]))
        elif k + 1 < len(grid) and gap[k] * gap[k + 1] < 0:
            share = gap[k] / (gap[k] - gap[k + 1])
            matches.append(float(grid[k] + share * (grid[k + 1] - grid[k])))
    return matches


def calibration_against_gold(diagram: AffectedItemDiagram, truth: Mapping[str, float]) -> dict:
    """The diagram's ΔRecall and IQ beside the true ones, JSON-ready.

    ``truth`` is :func:`~metrics_core.gold.truth_from_gold`'s dict. Returns ``truth``
    (DeltaRecall, IQ, RecallBase, PrecisionBase), ``diagram`` (the values compared and the
    parameters they came from), ``matching_recall_base`` (Variant 1 parameters giving the
    true ΔRecall) and ``at_true_parameters`` (the diagram with the true Recall_Base under
    Variant 1, and with the true Precision_Base and Recall_Base under Variant 2).
    """
    at_true = {}
    recall_base, precision_base = truth["RecallBase"], truth["PrecisionBase"]
    if 0 < recall_base <= 1 and 0 < precision_base <= 1:
        for key, parameters in (
            ("variant_1", {"recall_base": recall_base}),
            ("variant_2", {"recall_base": recall_base, "precision_base": precision_base}),
        ):
            d = diagram.with_parameters(**parameters)
            at_true[key] = {"DeltaRecall": json_number(d.delta_recall), "IQ": json_number(d.iq), "clips": d.clips}
    return {
        "truth": {name: json_number(truth[name]) for name in ("DeltaRecall", "IQ", "RecallBase", "PrecisionBase")},
        "diagram": {
            "variant": diagram.variant,
            "recall_base": json_number(diagram.recall_base),
            "precision_base": None if diagram.precision_base is None else json_number(diagram.precision_base),
            "DeltaRecall": json_number(diagram.delta_recall),
            "IQ": json_number(diagram.iq),
        },
        "matching_recall_base": [round(r, 4) for r in recall_base_matching(diagram, truth["DeltaRecall"])],
        "at_true_parameters": at_true,
    }
