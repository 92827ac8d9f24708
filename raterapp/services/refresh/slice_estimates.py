"""Quality estimates per slice (an item attribute's values), computed by the worker's derived
step after each estimate snapshot and stored on its ``DerivedEstimate``, so the slices page
reads them instead of computing.

Impact per value was stored at preparation (``ImpactGroup``); these are the verdict-based
estimates of the ``MAX_ESTIMATED_SLICES`` heaviest values of every attribute.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from metrics_core import Population, estimate_quality_by_slice
from raterapp.models import Experiment
from raterapp.population_files import population_attributes
from raterapp.selectors.dashboard import metric_readings
from raterapp.selectors.samples import JudgedSample
from raterapp.selectors.slices import slice_labels_heaviest

# Each slice's estimates pass over the sample once; beyond this many values a table is
# not read anyway, and the lighter slices have too few draws for a useful interval.
MAX_ESTIMATED_SLICES = 30


def slice_estimates_compute(
    *, experiment: Experiment, judged: JudgedSample, labelled_draws=None
) -> dict[str, dict[str, dict]]:
    """Attribute → value → ``{"metric": readings, "contribution": readings}`` for the heaviest
    values of every slice attribute. Empty on Dask (the population is not in memory here).
    ``labelled_draws``: the sample rows' draws in the labelled prefix of a draw-order experiment
    (abcde-spec §14), as for the overall estimates."""
    if experiment.engine == Experiment.Engine.DASK or judged.population is None:
        return {}
    labels_of = slice_labels_heaviest(experiment=experiment, per_slice=MAX_ESTIMATED_SLICES)
    if not labels_of:
        return {}
    attributes = population_attributes(experiment)
    return {
        attribute: _slice_quality(experiment, judged, attributes[attribute], labels, labelled_draws)
        for attribute, labels in labels_of.items()
        if attribute in attributes
    }


def _slice_quality(experiment: Experiment, judged: JudgedSample, column, labels: list[str], labelled_draws) -> dict:
    values = pc.fill_null(column, "").to_numpy(zero_copy_only=False)
    codes = pd.Index(labels).get_indexer(values).astype(np.int64)  # -1: a value not estimated
    by_slice = estimate_quality_by_slice(
        cast(Population, judged.population),  # in memory: slice_estimates_compute saw to it
        judged.sample,
        judged.verdicts,
        slice_of_item=codes,
        labels=labels,
        confidence=experiment.confidence,
        labelled_draws=labelled_draws,
    )
    return {
        row.label: {"metric": metric_readings(row.metric), "contribution": metric_readings(row.contribution)}
        for row in by_slice
    }
