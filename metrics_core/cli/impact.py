"""``impact``: the exact impact metrics, and the per-item and per-cluster tables."""

from __future__ import annotations

import argparse
import os
from typing import Any

import numpy as np

from ..impact import impact_metrics, impact_per_base_cluster, impact_per_exp_cluster, impact_per_item
from ..io import InputError, ItemTable, check_output_path, read_items, write_tables
from ..population import Population
from ..results import IMPACT_METRICS
from .common import impact_json, on_dask


def run_impact(args: argparse.Namespace) -> dict:
    if args.engine == "dask":
        return on_dask(args, run_impact_dask)
    outputs = [path for path in (args.per_item, args.per_cluster) if path]
    for path in outputs:
        check_output_path(path)
    if len(outputs) == 2 and os.path.abspath(outputs[0]) == os.path.abspath(outputs[1]):
        raise InputError(args.per_cluster, "--per-item and --per-cluster name the same file")
    items = read_items(args.items)
    dropped_items = items.dropped_items
    population = items.to_population()
    tables = {}
    if args.per_item:
        tables[args.per_item] = per_item_columns(items, population)
    del items  # its ids and labels: the population holds their codes
    if args.per_cluster:
        tables[args.per_cluster] = per_cluster_columns(population)
    result = impact_json(impact_metrics(population), dropped_items)
    write_tables(tables)
    return result


def run_impact_dask(args: argparse.Namespace) -> dict:
    """``impact --engine dask``: ITEMS and the OUT tables are Parquet datasets (folders or URLs)."""
    from .. import dask_backend

    outputs = [path for path in (args.per_item, args.per_cluster) if path]
    for path in outputs:
        _check_dataset_output(path)
    if len(outputs) == 2 and os.path.abspath(outputs[0]) == os.path.abspath(outputs[1]):
        raise InputError(args.per_cluster, "--per-item and --per-cluster name the same folder")
    items = dask_backend.read_items(args.items)
    result = impact_json(dask_backend.impact_metrics(items), 0)
    if args.per_item:
        dask_backend.write_parquet(dask_backend.impact_per_item(items), args.per_item)
    if args.per_cluster:
        dask_backend.write_parquet(dask_backend.impact_per_cluster(items), args.per_cluster)
    return result


def _check_dataset_output(path: str) -> None:
    """A Parquet dataset is written as a new folder; URLs are the storage's business."""
    if "://" in path:
        return
    if os.path.exists(path):
        raise InputError(path, "cannot write: it exists already (the dask engine writes a new folder)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(path, f"cannot write: folder {folder!r} does not exist")


def per_item_columns(items: ItemTable, population: Population) -> dict[str, Any]:
    """``item_id, base_cluster, exp_cluster, weight, affected``, then the per-item metrics."""
    per_item = impact_per_item(population)
    columns: dict[str, Any] = {
        "item_id": items.item_id,
        "base_cluster": items.base_cluster,
        "exp_cluster": items.exp_cluster,
        "weight": items.weight,
        "affected": per_item["Affected"],
    }
    columns.update({name: per_item[name] for name in IMPACT_METRICS if name in per_item})
    return columns


def per_cluster_columns(population: Population) -> dict[str, Any]:
    """One row per Base cluster then per Exp cluster, with the IMPACT_METRICS of its items."""
    tables = (("base", impact_per_base_cluster(population)), ("exp", impact_per_exp_cluster(population)))
    columns: dict[str, Any] = {
        "clustering": np.concatenate([np.full(len(table), name, dtype=object) for name, table in tables]),
        "cluster_id": _cluster_ids([table.labels for _, table in tables]),
    }
    for field in ("items", "affected_items", "weight"):
        columns[field] = np.concatenate([getattr(table, field) for _, table in tables])
    for name in IMPACT_METRICS:
        columns[name] = np.concatenate([table.metrics[name] for _, table in tables])
    return columns


def _cluster_ids(labels: list[np.ndarray]) -> np.ndarray:
    """Base and Exp cluster ids in one column: integers if both are, else text."""
    if all(part.dtype.kind in "iu" for part in labels):
        return np.concatenate(labels)
    return np.concatenate([part if part.dtype.kind == "O" else part.astype(str).astype(object) for part in labels])
