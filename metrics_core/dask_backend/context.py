"""What the estimators need of a sample drawn on Dask (:class:`metrics_core.SampleContext`),
and the rows of the sample's items, without the population on the driver.

Per sample row the set weights of the vantage item's cell come from the cell table (the
O(S) cells of the drawn items); the class totals are exact sums over the cell table of
:func:`metrics_core.masses.cell_class_terms`, so they do not depend on the partitioning.
"""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd

from ..context import CONTEXT_EXACT, SampleContext
from ..masses import cell_class_terms
from .exact import exact_sum, exact_to_float
from .impact import impact_metrics
from .items import KEYS, DaskItems, cell_mass_inputs
from .segments import shared


def items_rows(items: DaskItems, ids) -> pd.DataFrame:
    """Every column of the items with these ids, one row each, sorted by ``item_id`` (``weight`` in
    the files' units, :meth:`~.items.DaskItems.given_weight`).

    Reads each partition once and keeps only the wanted rows: the driver holds O(len(ids)).
    """
    wanted = pd.Index(pd.unique(np.asarray(ids)))
    frame = items.frame
    found = frame.map_partitions(_rows_with_ids, shared(wanted), meta=frame._meta).compute()
    found = found.sort_values("item_id", kind="stable").reset_index(drop=True)
    found["weight"] = items.given_weight(found["weight"].to_numpy())
    if len(found) != len(wanted):
        missing = wanted.difference(pd.Index(found["item_id"]))
        raise ValueError(f"{len(missing)} item ids are not among the items, e.g. {missing[0]!r}")
    return found


def sample_context(items: DaskItems, pairs: pd.DataFrame, *, item_rows: pd.DataFrame | None = None) -> SampleContext:
    """The :class:`~metrics_core.SampleContext` of a sample drawn by :func:`.sample_pairs`
    (``pairs``, the PAIRS table with item ids), rows in ``pairs``' order.

    ``item_rows`` (:func:`items_rows` of the sample's items) saves reading them again.
    """
    scheme = str(pairs["scheme"].iloc[0]) if len(pairs) else "jaccard"
    if item_rows is None:
        item_rows = items_rows(items, pd.concat([pairs["i"], pairs["j"]]))
    vantage = item_rows.set_index("item_id").loc[pairs["i"].to_numpy(), KEYS].reset_index(drop=True)
    sets = cells_of(items, vantage)
    totals = class_totals(items, scheme)
    rate_totals = totals if scheme == "precision" else class_totals(items, "precision")
    exact = impact_metrics(items).metrics
    return SampleContext.from_columns(
        union=sets["set_union"].to_numpy(),
        base=sets["base_weight"].to_numpy(),
        exp=sets["exp_weight"].to_numpy(),
        totals=totals,
        rate_totals=rate_totals,
        exact={name: exact[name] for name in CONTEXT_EXACT},
    )


def cells_of(items: DaskItems, keys: pd.DataFrame) -> pd.DataFrame:
    """The rows of the cell table (:attr:`~.items.DaskItems.cells`) of each row of ``keys`` (``KEYS``
    columns), in ``keys``' order; a cell not in the table has nulls."""
    wanted = shared(keys.drop_duplicates())
    cells = items.cells.map_partitions(_cells_of, wanted, meta=items.cells._meta).compute()
    return keys.merge(cells, on=KEYS, how="left", validate="many_to_one")


def class_totals(items: DaskItems, scheme: str) -> np.ndarray:
    """:func:`metrics_core.masses.class_totals` of the items: exact sums over the cell table."""
    parts = [dask.delayed(_exact_class_terms)(part, scheme) for part in items.cells.to_delayed()]
    sums = np.array([exact_to_float(sum(column)) for column in zip(*dask.compute(*parts))])
    return sums / items.total_weight


def _exact_class_terms(part: pd.DataFrame, scheme: str) -> tuple[int, ...]:
    weight, weight_sq = part["cell_weight"].to_numpy(), part["cell_weight_sq"].to_numpy()
    terms = cell_class_terms(scheme, **cell_mass_inputs(part), weight=weight, weight_sq=weight_sq)
    return tuple(exact_sum(terms[:, k]) for k in range(4))


def _rows_with_ids(part: pd.DataFrame, wanted: pd.Index) -> pd.DataFrame:
    return part[part["item_id"].isin(wanted)]


def _cells_of(part: pd.DataFrame, wanted: pd.DataFrame) -> pd.DataFrame:
    return part.merge(wanted, on=KEYS, how="inner")
