"""Slices of an experiment by an item attribute: each value's exact impact and quality estimates.

The impact of every value was stored at preparation (``ImpactGroup``). Quality estimates need
the verdicts, so they are computed on request for the heaviest values and cached per
estimate snapshot: the table changes only when a new snapshot does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.compute as pc
from django.core.cache import cache

from metrics_core import estimate_quality_by_slice
from raterapp.models import Experiment, ImpactGroup
from raterapp.selectors.dashboard import metric_readings
from raterapp.selectors.experiments import estimate_snapshot_latest
from raterapp.selectors.samples import judged_sample_get
from raterapp.services.population import population_attributes

CLUSTER_DIMENSIONS = ("base", "exp")
# Each slice's estimates pass over the sample once; beyond this many values a table is
# not read anyway, and the lighter slices have too few draws for a useful interval.
MAX_ESTIMATED_SLICES = 30
CACHE_SECONDS = 3600


class UnknownAttribute(LookupError):
    pass


def slice_attributes_list(*, experiment: Experiment) -> list[str]:
    """The item attributes the experiment can be sliced by (those with few distinct values)."""
    return list(
        ImpactGroup.objects.filter(experiment=experiment)
        .exclude(dimension__in=CLUSTER_DIMENSIONS)
        .order_by("dimension")
        .values_list("dimension", flat=True)
        .distinct()
    )


def experiment_slices_get(*, experiment: Experiment, attribute: str) -> dict:
    """Every value of ``attribute``, heaviest first, with its impact metrics and (for the
    ``MAX_ESTIMATED_SLICES`` heaviest) its quality estimates: the slice's own metric and its
    contribution to the overall metric, each with its interval and reading."""
    if attribute in CLUSTER_DIMENSIONS:
        raise UnknownAttribute(attribute)
    groups = list(ImpactGroup.objects.filter(experiment=experiment, dimension=attribute).order_by("-weight", "label"))
    if not groups:
        raise UnknownAttribute(attribute)
    snapshot = estimate_snapshot_latest(experiment=experiment)
    estimated = [group.label for group in groups[:MAX_ESTIMATED_SLICES]]
    quality = {}
    # Slice estimates need every item's attribute and the slice's exact totals: the population.
    in_memory = experiment.engine != Experiment.Engine.DASK
    if snapshot is not None and in_memory:
        key = f"slices:{experiment.pk}:{snapshot.pk}:{attribute}"
        quality = cache.get(key)
        if quality is None:
            quality = _slice_quality(experiment, attribute, estimated)
            cache.set(key, quality, CACHE_SECONDS)
    total_weight = (experiment.impact or {}).get("total_weight") or 0.0
    rows = [
        {
            "label": group.label,
            "items": group.items,
            "affected_items": group.affected_items,
            "weight": group.weight,
            "weight_fraction": group.weight / total_weight if total_weight else None,
            "impact": group.metrics,
            **quality.get(group.label, {"metric": None, "contribution": None}),
        }
        for group in groups
    ]
    return {
        "attribute": attribute,
        "snapshot": snapshot.pk if snapshot is not None else None,
        "scheme": experiment.scheme,
        "confidence": experiment.confidence,
        "estimated_values": len(estimated) if snapshot is not None and in_memory else 0,
        "note": None
        if in_memory
        else "Prepared on Dask: exact impact per value; quality estimates per slice need the in-memory engine.",
        "values": len(groups),
        "rows": rows,
    }


def _slice_quality(experiment: Experiment, attribute: str, labels: list[str]) -> dict[str, dict]:
    judged = judged_sample_get(experiment=experiment)
    values = pc.fill_null(population_attributes(experiment)[attribute], "").to_numpy(zero_copy_only=False)
    codes = pd.Categorical(values, categories=labels).codes.astype(np.int64)
    by_slice = estimate_quality_by_slice(
        judged.population,
        judged.sample,
        judged.verdicts,
        slice_of_item=codes,
        labels=labels,
        confidence=experiment.confidence,
    )
    return {
        row.label: {"metric": metric_readings(row.metric), "contribution": metric_readings(row.contribution)}
        for row in by_slice
    }
