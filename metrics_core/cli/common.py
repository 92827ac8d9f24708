"""What the subcommands share: the program's name, item positions, the impact JSON, the Dask engine."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from ..io import InputError, ItemTable
from ..results import IMPACT_METRICS, json_number

PROG = "metrics_core"


def impact_json(metrics: Any, dropped_items: int) -> dict:
    """The ``impact`` JSON object, keys in the contract's order."""
    return {
        "items": int(metrics.items),
        "affected_items": int(metrics.affected_items),
        "total_weight": json_number(metrics.total_weight),
        "dropped_items": int(dropped_items),
        "metrics": {name: json_number(metrics.metrics[name]) for name in IMPACT_METRICS},
    }


def item_positions(items: ItemTable, path: str, column: str, ids: Any, n_rows: int) -> np.ndarray:
    return known_positions(items, path, column, ids, items.positions_of(ids), n_rows)


def known_positions(
    items: ItemTable, path: str, column: str, ids: Any, positions: np.ndarray, n_rows: int
) -> np.ndarray:
    """``positions`` (of ``ids``, a column of ``path``), or the error naming the first row whose id is no item's."""
    unknown = np.flatnonzero(positions < 0)
    if len(unknown):
        row = int(unknown[0])
        problem = f"{column} {ids[row].as_py()!r} is not an item_id of {items.path}"
        raise InputError.at_row(path, row, problem, n_rows=n_rows)
    return positions


def on_dask(args: argparse.Namespace, run: Callable[[argparse.Namespace], Any]) -> Any:
    """Run on the scheduler at ``--scheduler``, or on a local cluster started for this command."""
    try:
        from ..dask_backend.cluster import dask_client
    except ImportError:
        raise InputError(args.items, "--engine dask needs Dask: pip install 'abcde-rater[dask]'") from None
    with dask_client(args.scheduler):
        return run(args)
