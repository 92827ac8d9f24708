"""The ground-truth clustering of an experiment's items and its ground-truth metrics: the exact
quality metrics and the true ΔRecall and IQ.

Computed once, by the preparation, from the upload; the numbers come from metrics_core (which
calls such a clustering "gold": ``quality_from_gold``, ``truth_from_gold``).
The calibration of the estimates against them is part of the derived estimates.
"""

from __future__ import annotations

from metrics_core import quality_from_gold, truth_from_gold
from metrics_core.io import ItemTable, read_gold_labels
from metrics_core.results import json_number


def ground_truth_metrics_measure(*, items: ItemTable, path: str) -> dict:
    """``{"quality": exact quality metrics, "truth": true ΔRecall, IQ and parameters}`` against the
    ground-truth clustering file at ``path``; raises ``InputError`` naming the file when an item lacks one."""
    labels = read_gold_labels(path, items.item_id)
    population = items.to_population()
    return {
        "quality": {name: json_number(v) for name, v in quality_from_gold(population, labels).items()},
        "truth": {name: json_number(v) for name, v in truth_from_gold(population, labels).items()},
    }
