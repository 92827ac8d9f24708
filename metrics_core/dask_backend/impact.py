"""Exact impact metrics on Dask: overall, per Base cluster, per Exp cluster, per slice, per item.

The same numbers as :mod:`metrics_core.impact` (to rounding), through the same two
functions: :func:`~metrics_core.impact.impact_unit_terms` turns rows of the cell table (or of
a slice's units) into summable terms, :func:`~metrics_core.impact.impact_from_sums` turns
group sums into metrics. Overall sums are exact; group sums are canonical (see
:mod:`.items`), so the results do not depend on the partitioning.
"""

from __future__ import annotations

from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from ..impact import IMPACT_SUMS, POINTWISE_METRICS, impact_from_sums, impact_unit_terms
from ..results import IMPACT_METRICS, ImpactMetrics, ImpactTable
from .exact import exact_sum, exact_to_float
from .items import KEYS, DaskItems, canonical_group_sums

_COUNTS = ("items", "affected_items")
PER_ITEM_METRICS: tuple[str, ...] = tuple(
    name for name in IMPACT_METRICS if name in (*POINTWISE_METRICS, "WeightFractionOfBaseCluster")
)
PER_CLUSTER_COLUMNS: tuple[str, ...] = (
    "clustering",
    "cluster_id",
    "items",
    "affected_items",
    "weight",
    *IMPACT_METRICS,
)


def impact_metrics(items: DaskItems) -> ImpactMetrics:
    """Overall exact impact metrics, as :func:`metrics_core.impact_metrics` returns them
    (an example is in :mod:`metrics_core.dask_backend`)."""
    parts = [dask.delayed(_exact_term_sums)(part) for part in items.cells.to_delayed()]
    exact = {name: sum(values) for name, values in zip(IMPACT_SUMS, zip(*dask.compute(*parts)))}
    sums = {name: np.array([total if name in _COUNTS else exact_to_float(total)]) for name, total in exact.items()}
    metrics = impact_from_sums(sums)
    return ImpactMetrics(
        items=int(exact["items"]),
        affected_items=int(exact["affected_items"]),
        total_weight=float(items.given_weight(sums["weight"][0])),
        affected_weight=float(items.given_weight(sums["affected_weight"][0])),
        metrics={name: float(values[0]) for name, values in metrics.items()},
    )


def impact_per_cluster(items: DaskItems) -> dd.DataFrame:
    """One row per Base cluster, then per Exp cluster: the in-memory ``--per-cluster`` table.

    Columns :data:`PER_CLUSTER_COLUMNS`; ``clustering`` is ``"base"`` or ``"exp"``. Lazy: write
    it with ``to_parquet`` (it has a row per cluster, too many for the driver at scale).
    """
    cells = items.cells
    terms = cells.map_partitions(_cell_terms, keep=KEYS)
    tables = []
    for side, by, order in (("base", "base_cluster", "exp_cluster"), ("exp", "exp_cluster", "base_cluster")):
        sums = canonical_group_sums(
            terms,
            by=[by],
            order=[order],
            sums={name: name for name in IMPACT_SUMS},
            npartitions=cells.npartitions,
            grouped_already=side == "exp",  # the cell table is partitioned by Exp cluster
        )
        tables.append(sums.map_partitions(_finish_table, side=side, label=by, exponent=items.weight_exponent))
    base_ids, exp_ids = (table["cluster_id"].dtype for table in tables)
    if not (pd.api.types.is_integer_dtype(base_ids) and pd.api.types.is_integer_dtype(exp_ids)):
        tables = [table.assign(cluster_id=table["cluster_id"].astype(str)) for table in tables]
    return dd.concat(tables)


def impact_by_slice(items: DaskItems, column: str) -> ImpactTable:
    """Impact metrics of the items of each value of attribute ``column`` (a slice).

    As :func:`metrics_core.impact_by_group`; labels ascending (missing values last).
    """
    if column not in items.attributes:
        raise ValueError(f"column must be one of the attributes {list(items.attributes)}; got {column!r}")
    frame = items.frame
    units = canonical_group_sums(
        frame[[column, *KEYS, "weight"]].assign(weight_sq=frame["weight"] ** 2),
        by=[column, *KEYS],
        order=["weight"],
        sums={"cell_weight": "weight", "cell_weight_sq": "weight_sq", "cell_size": None},
        npartitions=frame.npartitions,
    )
    per_cell = items.cells[[*KEYS, "affected", "base_weight", *POINTWISE_METRICS]]
    terms = units.merge(per_cell, on=KEYS, how="inner").map_partitions(_cell_terms, keep=[column, *KEYS])
    sums = canonical_group_sums(
        terms, by=[column], order=KEYS, sums={name: name for name in IMPACT_SUMS}, npartitions=frame.npartitions
    )
    table = sums.compute().sort_values(column, na_position="last", kind="stable")
    columns = {name: table[name].to_numpy() for name in IMPACT_SUMS}
    return ImpactTable(
        labels=table[column].to_numpy(),
        items=columns["items"].astype(np.int64),
        affected_items=columns["affected_items"].astype(np.int64),
        weight=items.given_weight(columns["weight"]),
        metrics=impact_from_sums(columns),
    )


def impact_per_item(items: DaskItems) -> dd.DataFrame:
    """The in-memory ``--per-item`` table: ``item_id, base_cluster, exp_cluster, weight, affected``
    and :data:`PER_ITEM_METRICS`, one row per item (lazy: write it with ``to_parquet``)."""
    per_cell = items.cells[[*KEYS, "affected", "base_weight", *POINTWISE_METRICS]]
    joined = items.frame[["item_id", *KEYS, "weight"]].merge(per_cell, on=KEYS, how="inner")
    joined = joined.assign(
        WeightFractionOfBaseCluster=joined["weight"] / joined["base_weight"],
        weight=items.given_weight(joined["weight"]),  # in the files' units, as in memory
    )
    return joined[["item_id", *KEYS, "weight", "affected", *PER_ITEM_METRICS]]


def write_parquet(frame: dd.DataFrame, path: Any, *, storage_options: dict | None = None) -> None:
    """Write a lazy table as a Parquet dataset (a folder of part files) at ``path``."""
    frame.to_parquet(path, write_index=False, storage_options=storage_options)


def _cell_terms(part: pd.DataFrame, keep: list[str]) -> pd.DataFrame:
    terms = impact_unit_terms(
        {name: part[name].to_numpy() for name in POINTWISE_METRICS},
        affected=part["affected"].to_numpy(),
        weight=part["cell_weight"].to_numpy(),
        weight_sq=part["cell_weight_sq"].to_numpy(),
        items=part["cell_size"].to_numpy(),
        base_weight=part["base_weight"].to_numpy(),
    )
    out = part[keep].copy()
    for name, values in terms:
        out[name] = values
    return out


def _exact_term_sums(part: pd.DataFrame) -> tuple[int, ...]:
    terms = _cell_terms(part, keep=[])
    return tuple(
        int(terms[name].sum()) if name in _COUNTS else exact_sum(terms[name].to_numpy()) for name in IMPACT_SUMS
    )


def _finish_table(part: pd.DataFrame, side: str, label: str, exponent: int) -> pd.DataFrame:
    sums = {name: part[name].to_numpy() for name in IMPACT_SUMS}
    metrics = impact_from_sums(sums)
    out = pd.DataFrame(
        {
            "clustering": np.full(len(part), side, dtype=object),
            "cluster_id": part[label].to_numpy(),
            "items": sums["items"].astype(np.int64),
            "affected_items": sums["affected_items"].astype(np.int64),
            "weight": np.ldexp(sums["weight"], -exponent),  # in the files' units
        }
    )
    for name in IMPACT_METRICS:
        out[name] = metrics[name]
    return out
