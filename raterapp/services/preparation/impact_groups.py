"""Impact metrics of an experiment's population: overall, and per Base cluster, Exp cluster and slice."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metrics_core import (
    IMPACT_METRICS,
    ImpactMetrics,
    ImpactTable,
    impact_by_group,
    impact_metrics,
    impact_per_base_cluster,
    impact_per_exp_cluster,
)
from metrics_core.results import json_number
from raterapp.db.fields import max_length_of
from raterapp.models import Experiment, ImpactGroup
from raterapp.population_files import population_attributes, population_for_experiment

# A population of millions has hundreds of thousands of clusters, far more than anyone
# browses: only the clusters that carry most of the change (largest JaccardDistance x
# weight, i.e. share of the overall JaccardDistance) are stored.
TOP_CLUSTERS = 1000
# An attribute with more distinct values than this is an id or free text, not a slice.
MAX_SLICE_VALUES = 1000


def impact_groups_build(
    *, experiment: Experiment, on_progress: Callable[[float], None]
) -> tuple[ImpactMetrics, list[ImpactGroup]]:
    """The overall impact metrics and the (unsaved) ImpactGroup rows of the experiment."""
    _, population = population_for_experiment(experiment)
    overall = impact_metrics(population)
    on_progress(0.3)
    groups = impact_group_rows(experiment, "base", impact_per_base_cluster(population), limit=TOP_CLUSTERS)
    groups += impact_group_rows(experiment, "exp", impact_per_exp_cluster(population), limit=TOP_CLUSTERS)
    on_progress(0.6)
    attributes = {
        name: values for name, values in population_attributes(experiment).items() if _sliceable(name, values)
    }
    for k, (name, values) in enumerate(attributes.items()):
        groups += impact_group_rows(experiment, name, impact_by_group(population, pc.fill_null(values, "")))
        on_progress(0.6 + 0.4 * (k + 1) / len(attributes))
    return overall, groups


def _sliceable(name: str, values: pa.Array) -> bool:
    """Few distinct values, each short enough to be a stored label (missing values count as '')."""
    if len(name) > max_length_of(ImpactGroup, "dimension"):
        return False
    if pc.count_distinct(values, mode="all").as_py() > MAX_SLICE_VALUES:
        return False
    longest = pc.max(pc.utf8_length(values)).as_py() or 0
    return longest <= max_length_of(ImpactGroup, "label")


def impact_group_rows(
    experiment: Experiment, dimension: str, table: ImpactTable, *, limit: int | None = None
) -> list[ImpactGroup]:
    """ImpactGroup rows of a table of groups; with ``limit``, the groups carrying most of the change."""
    keep = np.arange(len(table))
    if limit is not None and len(table) > limit:
        share = np.nan_to_num(table.metrics["JaccardDistance"] * table.weight)
        keep = np.argsort(-share, kind="stable")[:limit]
    metrics = {name: table.metrics[name][keep].tolist() for name in IMPACT_METRICS}
    labels, items, affected, weight = (
        table.labels[keep].tolist(),
        table.items[keep].tolist(),
        table.affected_items[keep].tolist(),
        table.weight[keep].tolist(),
    )
    return [
        ImpactGroup(
            experiment=experiment,
            dimension=dimension,
            label=str(labels[k]),
            items=items[k],
            affected_items=affected[k],
            weight=weight[k],
            metrics={name: json_number(metrics[name][k]) for name in IMPACT_METRICS},
        )
        for k in range(len(keep))
    ]
