"""Items on Dask: partitioned Parquet read lazily, checked, and summed into cells.

Conventions shared by this package:

- No item-sized data reaches the driver: it holds O(#buckets + S) values at most.
- Sums that feed a result are order-independent, so nothing depends on how the items are
  partitioned or on the number of workers: group sums are taken over rows sorted
  canonically inside their group (after a shuffle that puts a whole group in one
  partition), and totals over the whole population are exact (:mod:`.exact`).
- The per-cell formulas are the in-memory backend's (:func:`metrics_core.population.cell_set_weights`,
  :func:`metrics_core.impact.cell_pointwise`, ...), applied to the rows of the cell table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypedDict

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from ..impact import POINTWISE_METRICS, cell_pointwise
from ..io import InputError
from ..population import cell_set_weights, cells_affected
from .exact import exact_sum, exact_to_float
from .weights import SUMMARY_META, WeightSource, checked_weights, weight_exponent, weight_summary

KEYS: list[str] = ["base_cluster", "exp_cluster"]
ITEM_COLUMNS: tuple[str, ...] = ("item_id", "base_cluster", "exp_cluster", "weight")
# Columns of the cell table beyond KEYS: sums of the cell and of its clusters, then per-cell values.
SET_COLUMNS: tuple[str, ...] = ("set_split", "set_merge", "set_union")


@dataclass(frozen=True, eq=False)
class DaskItems:
    """Items as a Dask DataFrame: ``item_id, base_cluster, exp_cluster, weight`` and attributes.

    ``weight`` is float64 (1.0 where the files have no weight column), times
    ``2**weight_exponent``: weights of extreme magnitude are rescaled exactly by the power of two
    the in-memory population uses (:mod:`metrics_core._validation`), and every weight here
    (cell sums, :attr:`total_weight`) is in those units; the results of :mod:`.impact` and
    :func:`~.context.items_rows` give weights in the files' units (:meth:`given_weight`).
    ``attributes`` names the other columns (slices); ``n_items`` is the number of items when the
    reading checked them (counted on the way), else None.
    """

    path: str
    frame: dd.DataFrame
    attributes: tuple[str, ...]
    n_items: int | None = None
    weight_exponent: int = 0

    def given_weight(self, weight: Any) -> Any:
        """Weights of these items (numbers, arrays or Dask series) in the units of the files."""
        if not self.weight_exponent:
            return weight
        if isinstance(weight, (dd.Series, dd.DataFrame)):
            return weight.map_partitions(np.ldexp, -self.weight_exponent, meta=weight._meta)
        return np.ldexp(weight, -self.weight_exponent)

    @cached_property
    def cell_sums(self) -> dd.DataFrame:
        """The sums of the cell table, persisted on the workers: one row per (Base cluster,
        Exp cluster), partitioned by Exp cluster (all the cells of an Exp cluster in one
        partition). Columns: ``base_cluster, exp_cluster, cell_weight, cell_weight_sq,
        cell_size, base_weight, base_size, exp_weight, exp_size``.
        """
        return cell_table(self.frame).persist()

    @cached_property
    def cells(self) -> dd.DataFrame:
        """The cell table: :attr:`cell_sums` and the values derived from them per cell,
        ``affected``, the :data:`~metrics_core.impact.POINTWISE_METRICS` and the set weights
        ``set_split, set_merge, set_union`` (weight of Base \\ Exp, Exp \\ Base, Base ∪ Exp).

        Lazy: the derived values are recomputed from the persisted sums where they are used,
        which keeps the workers' memory to the sums (about half).
        """
        return self.cell_sums.map_partitions(_cell_columns)

    @cached_property
    def total_weight(self) -> float:
        """W (times ``2**weight_exponent``), summed exactly (the same float however the items are partitioned)."""
        parts = [dask.delayed(_exact_column_sum)(part, "cell_weight") for part in self.cell_sums.to_delayed()]
        return exact_to_float(sum(dask.compute(*parts)))


def read_items(path: Any, *, storage_options: dict | None = None, validate: bool = True) -> DaskItems:
    """Open an items dataset: a Parquet file, a folder of Parquet files or any fsspec URL.

    Columns ``item_id, base_cluster, exp_cluster``, optional ``weight``; every other column
    is an attribute. With ``validate`` (the default) one pass over the data checks that no
    required value is missing, that weights are positive finite numbers spanning at most
    2**200 and that item ids are unique; an :class:`~metrics_core.io.InputError` names the
    first offending item. A weight is refused with the in-memory reader's message: in one
    Parquet file naming its row, as that reader does; in a dataset of several files naming its
    ``item_id`` instead (a row counted across the files would be hard to find). Weights of
    extreme magnitude are rescaled exactly, as in memory (:attr:`DaskItems.weight_exponent`;
    without ``validate`` too).
    """
    try:
        frame = dd.read_parquet(path, storage_options=storage_options)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read Parquet: {exc}") from None
    missing = [name for name in ITEM_COLUMNS[:3] if name not in frame.columns]
    if missing:
        raise InputError(path, f"missing column {missing[0]!r}; items need item_id, base_cluster, exp_cluster")
    given = None  # the weights as the files hold them (the errors quote them so)
    if "weight" in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame["weight"].dtype):
            raise InputError(path, f"column 'weight' has type {frame['weight'].dtype}; expected numbers")
        given = frame[["item_id", "weight"]]
        frame = frame.assign(weight=frame["weight"].astype(np.float64))
    else:
        frame = frame.assign(weight=1.0)
    attributes = tuple(name for name in frame.columns if name not in ITEM_COLUMNS)
    frame = frame[[*ITEM_COLUMNS, *attributes]]
    if validate:
        n_items, exponent = _validate(WeightSource(path, storage_options), frame, given)
    else:
        n_items, exponent = None, weight_exponent(frame, given)
    if exponent:
        frame = frame.assign(weight=frame["weight"].map_partitions(np.ldexp, exponent, meta=frame["weight"]._meta))
    return DaskItems(str(path), frame, attributes, n_items, exponent)


def _validate(source: WeightSource, frame: dd.DataFrame, given: dd.DataFrame | None) -> tuple[int, int]:
    """Check the items in one pass; their number and the weights' rescaling exponent."""
    path = source.name
    problems = {f"missing {name} (null)": frame[name].isna() for name in ITEM_COLUMNS[:3]}
    counts = {problem: bad.sum() for problem, bad in problems.items()}
    # One summary of the weights per partition (in order), computed in the same pass.
    summaries = None if given is None else given.map_partitions(weight_summary, meta=SUMMARY_META)
    counts, n_rows, n_ids, summaries = dask.compute(counts, frame.shape[0], frame["item_id"].nunique(), summaries)
    for problem, count in counts.items():
        if count:
            row = frame[problems[problem]].head(1, npartitions=-1)
            raise InputError(path, f"item_id {row['item_id'].tolist()[0]!r}: {problem}")
    exponent = 0 if given is None else checked_weights(source, given, summaries["summary"].tolist())
    if n_ids != n_rows:
        sizes = frame["item_id"].value_counts()
        duplicated = sizes[sizes > 1].head(1, npartitions=-1)
        raise InputError(path, f"duplicate item_id {duplicated.index.tolist()[0]!r}")
    if n_rows == 0:
        raise InputError(path, "no items")
    return int(n_rows), exponent


def cell_table(items: dd.DataFrame) -> dd.DataFrame:
    """The cells of ``items`` (``base_cluster, exp_cluster, weight``) with the sums of :attr:`DaskItems.cell_sums`.

    Two shuffles: the items by Base cluster (each partition then holds whole Base clusters:
    their cells and Base totals are summed there), and the cells by Exp cluster (Exp totals
    likewise). The result is partitioned by Exp cluster.
    """
    n_out = max(1, items.npartitions)
    by_base = items[[*KEYS, "weight"]].shuffle(on=["base_cluster"], npartitions=n_out)
    cells = by_base.map_partitions(_cells_with_base_totals)
    by_exp = cells.shuffle(on=["exp_cluster"], npartitions=n_out)
    return by_exp.map_partitions(_with_exp_totals)


def _cells_with_base_totals(part: pd.DataFrame) -> pd.DataFrame:
    part = part.sort_values([*KEYS, "weight"], kind="stable")
    grouped = part.assign(weight_sq=part["weight"] ** 2).groupby(KEYS, sort=False)
    cells = pd.DataFrame(
        {
            "cell_weight": grouped["weight"].sum(),
            "cell_weight_sq": grouped["weight_sq"].sum(),
            "cell_size": grouped.size(),
        }
    ).reset_index()
    return _with_totals(cells, "base_cluster", "base")


def _with_exp_totals(cells: pd.DataFrame) -> pd.DataFrame:
    return _with_totals(cells.sort_values(["exp_cluster", "base_cluster"], kind="stable"), "exp_cluster", "exp")


def _with_totals(cells: pd.DataFrame, by: str, side: str) -> pd.DataFrame:
    """Add the totals of each cell's ``by`` cluster, summed over its cells in their (sorted) order."""
    grouped = cells.groupby(by, sort=False)
    totals = pd.DataFrame({f"{side}_weight": grouped["cell_weight"].sum(), f"{side}_size": grouped["cell_size"].sum()})
    return cells.merge(totals, left_on=by, right_index=True, how="left")


def canonical_group_sums(
    frame: dd.DataFrame,
    *,
    by: list[str],
    order: list[str],
    sums: dict[str, str | None],
    npartitions: int,
    grouped_already: bool = False,
) -> dd.DataFrame:
    """Group sums that do not depend on the partitioning of ``frame``.

    Rows are shuffled so that each group lies in one partition, sorted by ``by + order``
    and summed in that order. ``sums`` maps each output column to the column it sums
    (``None``: the row count). ``order`` must make the rows of a group that differ in the
    summed columns distinct, so that the sorted order is canonical. ``grouped_already``: each
    group of ``frame`` lies in one partition already; no shuffle.
    """
    shuffled = frame if grouped_already else frame.shuffle(on=by, npartitions=npartitions)

    def sum_sorted(part: pd.DataFrame) -> pd.DataFrame:
        part = part.sort_values([*by, *order], kind="stable")
        grouped = part.groupby(by, sort=False, dropna=False)
        columns = {out: grouped[source].sum() if source else grouped.size() for out, source in sums.items()}
        return pd.DataFrame(columns).reset_index()

    return shuffled.map_partitions(sum_sorted)


def _cell_columns(part: pd.DataFrame) -> pd.DataFrame:
    """The per-cell values of the cell table, by the in-memory backend's formulas."""
    column = lambda name: part[name].to_numpy()  # noqa: E731
    sets = cell_set_weights(
        base_weight=column("base_weight"),
        exp_weight=column("exp_weight"),
        cell_weight=column("cell_weight"),
        base_size=column("base_size"),
        exp_size=column("exp_size"),
        cell_size=column("cell_size"),
    )
    affected = cells_affected(base_size=column("base_size"), exp_size=column("exp_size"), cell_size=column("cell_size"))
    pointwise = cell_pointwise(sets)
    return part.assign(
        affected=affected,
        **{name: pointwise[name] for name in POINTWISE_METRICS},
        set_split=sets["split"],
        set_merge=sets["merge"],
        set_union=sets["union"],
    )


def cell_sets(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The :attr:`~metrics_core.population.Population.cell_sets` of rows of the cell table."""
    return {
        "base": frame["base_weight"].to_numpy(),
        "exp": frame["exp_weight"].to_numpy(),
        "both": frame["cell_weight"].to_numpy(),
        "split": frame["set_split"].to_numpy(),
        "merge": frame["set_merge"].to_numpy(),
        "union": frame["set_union"].to_numpy(),
    }


class CellMassInputs(TypedDict):
    """What the class-mass formulas of :mod:`metrics_core.masses` read of cells, as keywords."""

    sets: dict[str, np.ndarray]
    affected: np.ndarray
    cell_size: np.ndarray


def cell_mass_inputs(frame: pd.DataFrame) -> CellMassInputs:
    """What the class-mass formulas of :mod:`metrics_core.masses` read of rows of the cell table."""
    return {
        "sets": cell_sets(frame),
        "affected": frame["affected"].to_numpy(),
        "cell_size": frame["cell_size"].to_numpy(),
    }


def _exact_column_sum(part: pd.DataFrame, name: str) -> int:
    return exact_sum(part[name].to_numpy())
