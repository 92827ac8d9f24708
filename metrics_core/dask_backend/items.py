"""Items on Dask: partitioned Parquet read lazily, checked, and summed into cells.

Conventions shared by this package:

- No item-sized data reaches the driver: it holds O(#buckets + S) values at most.
- Sums that feed a result are order-independent, so nothing depends on how the items are
  partitioned or on the number of workers: group sums are taken over rows sorted
  canonically inside their group (after a shuffle that puts a whole group in one
  partition), and totals over the whole population are exact (:mod:`.exact`).
- The per-cell formulas are the in-memory backend's (:func:`metrics_core.population.cell_set_weights`,
  :func:`metrics_core.impact._cell_pointwise`, ...), applied to the rows of the cell table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from fsspec.core import url_to_fs

from .._validation import weight_range_rescaling, weight_span_blame, weight_span_message
from ..impact import POINTWISE_METRICS, _cell_pointwise
from ..io import InputError
from ..io.errors import _place
from ..population import cell_set_weights, cells_affected
from .exact import exact_sum, exact_to_float

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
        n_items, exponent = _validate(_Source(path, storage_options), frame, given)
    else:
        n_items, exponent = None, _weight_exponent(frame, given)
    if exponent:
        frame = frame.assign(weight=frame["weight"].map_partitions(np.ldexp, exponent, meta=frame["weight"]._meta))
    return DaskItems(str(path), frame, attributes, n_items, exponent)


def _validate(source: _Source, frame: dd.DataFrame, given: dd.DataFrame | None) -> tuple[int, int]:
    """Check the items in one pass; their number and the weights' rescaling exponent."""
    path = source.name
    problems = {f"missing {name} (null)": frame[name].isna() for name in ITEM_COLUMNS[:3]}
    counts = {problem: bad.sum() for problem, bad in problems.items()}
    # One summary of the weights per partition (in order), computed in the same pass.
    summaries = None if given is None else given.map_partitions(_weight_summary, meta=_SUMMARY_META)
    counts, n_rows, n_ids, summaries = dask.compute(counts, frame.shape[0], frame["item_id"].nunique(), summaries)
    for problem, count in counts.items():
        if count:
            row = frame[problems[problem]].head(1, npartitions=-1)
            raise InputError(path, f"item_id {row['item_id'].tolist()[0]!r}: {problem}")
    exponent = 0 if given is None else _checked_weights(source, given, summaries["summary"].tolist())
    if n_ids != n_rows:
        sizes = frame["item_id"].value_counts()
        duplicated = sizes[sizes > 1].head(1, npartitions=-1)
        raise InputError(path, f"duplicate item_id {duplicated.index.tolist()[0]!r}")
    if n_rows == 0:
        raise InputError(path, "no items")
    return int(n_rows), exponent


# ---------------------------------------------------------------------------- weights
# The in-memory reader's checks and rescaling (metrics_core.io.source.TableSource.weights,
# metrics_core._validation) on weights the driver never holds: each partition reports its
# extremes, the driver applies the same rule to them and names the item as that reader does.


@dataclass(frozen=True)
class _Source:
    """Where the items come from, to name a place in them."""

    path: Any
    storage_options: dict | None

    @property
    def name(self) -> str:
        return str(self.path)

    @cached_property
    def one_file(self) -> bool:
        """One Parquet file (its rows are the dataset's, in order), not a folder, glob or list of files."""
        if not isinstance(self.path, (str, os.PathLike)):
            return False
        try:
            fs, location = url_to_fs(str(self.path), **(self.storage_options or {}))
            return bool(fs.isfile(location))
        except Exception:  # noqa: BLE001 - an unknown place is named by item_id, which always works
            return False

    def error(self, problem: str, at: _Weight) -> InputError:
        """``problem`` of the weight ``at``: on its row in one file, else of its item."""
        if self.one_file:
            return InputError(self.path, problem, row=at.row)
        return InputError(self.path, f"item_id {at.item_id!r}: {problem}")

    def place(self, at: _Weight) -> str:
        """Where the weight ``at`` is, after "the weight ...": on its row, or of its item."""
        return f"on {_place(at.row, None)}" if self.one_file else f"of item_id {at.item_id!r}"


@dataclass(frozen=True)
class _Weight:
    """One weight: its value, row (in its partition; in the dataset once placed), text and item."""

    value: float
    row: int
    text: str
    item_id: Any

    def moved(self, start: int) -> _Weight:
        return _Weight(self.value, self.row + start, self.text, self.item_id)


@dataclass(frozen=True)
class _WeightPart:
    """What one partition's weights tell the driver: rows, the first bad weight, the extremes."""

    rows: int
    null: _Weight | None  # the first missing weight (null, or NaN: Dask reads both as NaN)
    bad: tuple[_Weight, str] | None  # the first weight not positive and finite, and its problem
    lightest: _Weight | None  # the first of the lightest weights
    heaviest: _Weight | None  # the first of the heaviest
    total: int  # exact_sum of the weights


_SUMMARY_META = pd.DataFrame({"summary": pd.Series([], dtype=object)})


def _weight_summary(part: pd.DataFrame) -> pd.DataFrame:
    """The partition's :class:`_WeightPart`, as a one-row frame."""
    return pd.DataFrame({"summary": pd.Series([_weight_part(part)], dtype=object)})


def _weight_part(part: pd.DataFrame) -> _WeightPart:
    weight = _as_float(part)

    def at(row: int) -> _Weight:
        value = part["weight"].iloc[row]  # quoted as the in-memory reader quotes a Parquet value: 0, 2.0, 1e-310
        text = repr(value.item() if hasattr(value, "item") else value)
        item_id = part["item_id"].iloc[row]
        return _Weight(float(weight[row]), row, text, item_id.item() if hasattr(item_id, "item") else item_id)

    null = np.isnan(weight)
    bad = ~(np.isfinite(weight) & (weight > 0)) & ~null
    if null.any() or bad.any():
        first_null = at(int(np.argmax(null))) if null.any() else None
        first_bad = None
        if bad.any():
            row = int(np.argmax(bad))
            problem = "is not finite" if not np.isfinite(weight[row]) else "must be greater than 0"
            first_bad = (at(row), problem)
        return _WeightPart(len(weight), first_null, first_bad, None, None, 0)
    if len(weight) == 0:
        return _WeightPart(0, None, None, None, None, 0)
    return _WeightPart(
        len(weight), None, None, at(int(np.argmin(weight))), at(int(np.argmax(weight))), exact_sum(weight)
    )


def _checked_weights(source: _Source, given: dd.DataFrame, parts: list[_WeightPart]) -> int:
    """Refuse the weights as the in-memory reader does (the first missing weight, else the first
    not positive and finite, a total past float64, a span past 2**200); else the power of two to
    rescale them by."""
    starts = np.concatenate(([0], np.cumsum([part.rows for part in parts]))).tolist()
    for part, start in zip(parts, starts):
        if part.null is not None:
            raise source.error("missing weight (null)", part.null.moved(start))
    for part, start in zip(parts, starts):
        if part.bad is not None:
            weight, problem = part.bad
            raise source.error(f"weight {weight.text} {problem}", weight.moved(start))
    kept = [(part, start) for part, start in zip(parts, starts) if part.rows]
    if not kept:
        return 0
    try:
        total = exact_to_float(sum(part.total for part, _ in kept))
    except OverflowError:
        total = np.inf
    if not np.isfinite(total):
        raise InputError(source.name, "the weights add up to more than a float64 holds: scale them down")
    # The first row of the lightest and of the heaviest weight, as numpy's argmin/argmax find them.
    lightest = min((part.lightest.moved(start) for part, start in kept), key=lambda w: (w.value, w.row))
    heaviest = min((part.heaviest.moved(start) for part, start in kept), key=lambda w: (-w.value, w.row))
    heavier = weight_span_blame(lightest.value, heaviest.value, median=lambda: _median(given, starts[-1]))
    if heavier is not None:
        blamed, other = (heaviest, lightest) if heavier else (lightest, heaviest)
        named = f"the weight {other.text} {source.place(other)}"
        raise source.error(weight_span_message(f"weight {blamed.text}", named, heavier=heavier), blamed)
    return weight_range_rescaling(lightest.value, heaviest.value)


def _weight_exponent(frame: dd.DataFrame, given: dd.DataFrame | None) -> int:
    """The rescaling of weights not checked (``validate=False``): from their extremes alone."""
    if given is None:
        return 0
    lightest, heaviest = dask.compute(frame["weight"].min(), frame["weight"].max())
    if not (np.isfinite(lightest) and np.isfinite(heaviest) and lightest > 0):
        return 0  # unchecked garbage: left as it is
    return weight_range_rescaling(lightest, heaviest)


def _median(given: dd.DataFrame, n: int) -> float:
    """``numpy.median`` of the checked weights, exactly, in two small passes: the binary exponents
    of the middle order statistics (a histogram of exponents), then, if they differ, the two
    middle values themselves (the largest weight of the lower exponent, the smallest of the upper)."""
    parts = given.to_delayed()
    counts = sum(dask.compute(*(dask.delayed(_exponent_counts)(part) for part in parts)))
    cumulative = np.cumsum(counts)
    lower, upper = (int(np.searchsorted(cumulative, k, side="right")) for k in ((n - 1) // 2, n // 2))
    if lower == upper:
        return float(np.ldexp(0.5, lower - _EXPONENT_OFFSET))  # only its exponent matters
    ends = dask.compute(*(dask.delayed(_bin_ends)(part, lower, upper) for part in parts))
    below = max(end[0] for end in ends if end[0] is not None)
    above = min(end[1] for end in ends if end[1] is not None)
    return float(np.median(np.array([below, above])))


# frexp exponents of positive finite float64 run from -1073 (5e-324) to 1024.
_EXPONENT_OFFSET = 1074
_EXPONENT_BINS = _EXPONENT_OFFSET + 1025


def _exponent_counts(part: pd.DataFrame) -> np.ndarray:
    exponent = np.frexp(_as_float(part))[1].astype(np.int64) + _EXPONENT_OFFSET
    return np.bincount(exponent, minlength=_EXPONENT_BINS)


def _bin_ends(part: pd.DataFrame, lower: int, upper: int) -> tuple[float | None, float | None]:
    weight = _as_float(part)
    exponent = np.frexp(weight)[1].astype(np.int64) + _EXPONENT_OFFSET
    below, above = weight[exponent == lower], weight[exponent == upper]
    return (float(below.max()) if len(below) else None, float(above.min()) if len(above) else None)


def _as_float(part: pd.DataFrame) -> np.ndarray:
    return part["weight"].to_numpy(dtype=np.float64, na_value=np.nan)


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
    pointwise = _cell_pointwise(sets)
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


def cell_mass_inputs(frame: pd.DataFrame) -> dict[str, object]:
    """What the class-mass formulas of :mod:`metrics_core.masses` read of rows of the cell table."""
    columns = {name: frame[name].to_numpy() for name in ("affected", "cell_size")}
    return {"sets": cell_sets(frame), **columns}


def _exact_column_sum(part: pd.DataFrame, name: str) -> int:
    return exact_sum(part[name].to_numpy())
