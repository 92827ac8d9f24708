"""Validated tables (items, pairs, judgements) and their readers."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..judgements import VERDICTS
from ..population import Population, population_from_labels
from ..sampling import PAIR_CLASSES, SCHEMES, STRATA
from .errors import InputError
from .id_positions import (
    matched_positions,
    positions_of_ids,
)
from .source import (
    TableSource,
    as_string,
    combined_array,
    labels_for_population,
)

ITEM_COLUMNS = ("item_id", "base_cluster", "exp_cluster", "weight")
PAIR_COLUMNS = ("i", "j", "pair_class", "stratum", "draws", "scheme")
JUDGEMENT_COLUMNS = ("i", "j", "verdict")
# The first characters of text that a spreadsheet runs as a formula (OWASP, CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


# ---------------------------------------------------------------------------- tables


@dataclass(frozen=True, eq=False)
class ItemTable:
    """Validated items: id, Base and Exp cluster, weight and any other columns.

    ``attributes`` holds every other column of the items file (for slicing);
    ``dropped_items`` counts items present in only one of two clustering files.
    """

    path: str
    ids: pa.Array  # in their type (TableSource.ids): text, or integers (Parquet, canonical CSV)
    base_cluster: pa.Array
    exp_cluster: pa.Array
    weight: np.ndarray
    attributes: Mapping[str, pa.Array]
    dropped_items: int = 0

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def item_id(self) -> pa.Array:
        """The item ids as text (integer ids of a Parquet file cast when first asked)."""
        return as_string(self.ids)

    def without_labels(self) -> ItemTable:
        """This table without its cluster columns (empty), once a population holds their codes."""
        empty = pa.array([], type=pa.string())
        return replace(self, base_cluster=empty, exp_cluster=empty)

    def item_ids_at(self, positions: np.ndarray) -> pa.Array:
        """The text ids of the items at ``positions`` (without casting every id)."""
        return as_string(self.ids.take(pa.array(positions)))

    def positions_of(self, ids: Any) -> np.ndarray:
        """Position of each id among the items, -1 where the id is unknown (int64).

        Integer ids (of a Parquet file) are looked up as integers, ids given as text parsed first:
        an id written ``007`` is no integer item's, as it is no id of the items read as text.

        Examples
        --------
        >>> import numpy as np, pyarrow as pa
        >>> table = ItemTable("x.csv", pa.array(["a", "007", "7"]), pa.array(["1"] * 3),
        ...                   pa.array(["1"] * 3), np.ones(3), {})
        >>> table.positions_of(["7", "zz", "007"]).tolist()
        [2, -1, 1]
        >>> table = ItemTable("x.parquet", pa.array([40, 7]), pa.array([1, 1]), pa.array([1, 1]), np.ones(2), {})
        >>> table.positions_of(["7", "007", "40"]).tolist()
        [1, -1, 0]
        """
        return positions_of_ids(ids, self.ids, lambda: self.item_id)

    def to_population(self) -> Population:
        """The factorised clusterings; unit weights take the population's fast path.

        Text labels go in as pyarrow arrays, which the population factorises with one
        pyarrow hash pass (converting them to numpy objects first is several times
        slower on 10M rows); integer labels go in as numpy arrays (dense fast path).
        """
        unit = self.weight.strides == (0,) and (len(self.weight) == 0 or self.weight[0] == 1.0)
        weights = None if unit or bool(np.all(self.weight == 1.0)) else self.weight
        base, exp = (labels_for_population(labels) for labels in (self.base_cluster, self.exp_cluster))
        return population_from_labels(base, exp, weights)


@dataclass(frozen=True, eq=False)
class PairsTable:
    """A stored pair sample: item ids ``i`` (vantage) and ``j``, codes and draw counts.

    ``pair_class`` and ``stratum`` are int8 codes into PAIR_CLASSES and STRATA.
    """

    path: str
    i: pa.Array
    j: pa.Array
    pair_class: np.ndarray
    stratum: np.ndarray
    draws: np.ndarray
    scheme: str

    def __len__(self) -> int:
        return len(self.i)


@dataclass(frozen=True, eq=False)
class JudgementsTable:
    """Verdicts on pairs of item ids; ``verdict`` holds int8 codes into VERDICTS."""

    path: str
    i: pa.Array
    j: pa.Array
    verdict: np.ndarray
    rater: pa.Array | None = None  # read only when asked for (``with_rater``)

    def __len__(self) -> int:
        return len(self.i)


# ---------------------------------------------------------------------------- readers


def unit_weights(n: int) -> np.ndarray:
    """Weight 1.0 for each of ``n`` items, as a read-only zero-stride view (no N-sized buffer)."""
    return np.broadcast_to(np.float64(1.0), (n,))


def read_items(path: Any) -> ItemTable:
    """Read an items file: ``item_id, base_cluster, exp_cluster`` and optional ``weight``.

    Every other column is kept as an attribute. Raises :class:`InputError`.
    """
    src = TableSource.open(path, required=ITEM_COLUMNS[:3], optional=("weight",), keep_others=True)
    item_id = src.ids("item_id", as_text=False)
    with ThreadPoolExecutor(max_workers=1) as pool:
        # Checking the ids is the slowest check: overlap it with the others.
        unique = pool.submit(src.require_unique, "item_id", item_id)
        base, exp = src.labels("base_cluster"), src.labels("exp_cluster")
        weight = src.weights("weight") if "weight" in src.names else unit_weights(src.n_rows)
        unique.result()
    attributes = {name: combined_array(src.table.column(name)) for name in src.names if name not in ITEM_COLUMNS}
    return ItemTable(src.path, item_id, base, exp, weight, attributes)


def read_clusterings(base_path: Any, exp_path: Any, weights_path: Any = None) -> ItemTable:
    """Read two clusterings (``item_id, cluster_id``) and optional weights (``item_id, weight``).

    Items present in only one clustering are dropped and counted in
    ``dropped_items``; the items keep the Base file's order. Every kept item needs
    a weight when a weights file is given. Item ids keep their type (``TableSource.ids``): the
    files' items are matched as integers when both files' ids are integers. Raises :class:`InputError`.
    """
    with ThreadPoolExecutor(max_workers=2) as pool:
        base_read, exp_read = (pool.submit(_read_clustering, path, as_text=False) for path in (base_path, exp_path))
        base_ids, base_labels = base_read.result()
        exp_ids, exp_labels = exp_read.result()
    _, base_ids, base_labels, exp_labels, dropped = _common_items(
        base_path, base_ids, base_labels, exp_path, exp_ids, exp_labels
    )
    weight = unit_weights(len(base_ids)) if weights_path is None else _read_weights_for(weights_path, base_ids)
    return ItemTable(str(base_path), base_ids, base_labels, exp_labels, weight, {}, dropped)


def read_clustering_against_singletons(path: Any, weights_path: Any = None) -> ItemTable:
    """One clustering (``item_id, cluster_id``) as Base, and as Exp every item alone (MQM §5.1).

    The experiment of the absolute quality of a clustering. Optional weights as in
    :func:`read_clusterings`. The ids are read as text: they are the Exp labels too. Raises :class:`InputError`.
    """
    ids, labels = _read_clustering(path)
    weight = unit_weights(len(ids)) if weights_path is None else _read_weights_for(weights_path, ids)
    return ItemTable(str(path), ids, labels, ids, weight, {})


def read_gold_labels(path: Any, item_ids: pa.Array) -> pa.Array:
    """The ground-truth (gold) cluster (``item_id, cluster_id``) of each of ``item_ids``, in their order.

    Every item needs one; gold rows of other items are ignored. Raises :class:`InputError`.
    """
    ids, labels = _read_clustering(path)
    at = matched_positions(item_ids, ids)
    if (at < 0).any():
        missing = np.flatnonzero(at < 0)
        first = _id_text(item_ids, int(missing[0]))
        raise InputError(
            path, f"no ground-truth cluster for item_id {first!r} ({len(missing)} of {len(item_ids)} items lack one)"
        )
    return labels.take(pa.array(at))


def read_truth_and_prediction(truth_path: Any, pred_path: Any) -> ItemTable:
    """TRUTH as ``base_cluster`` and PRED as ``exp_cluster`` (both ``item_id, cluster_id``).

    As :func:`read_clusterings`, but the weight comes from TRUTH's optional ``weight``
    column (1.0 without one). Raises :class:`InputError`.
    """
    truth = TableSource.open(truth_path, required=("item_id", "cluster_id"), optional=("weight",))
    truth_ids = truth.ids("item_id", as_text=False)
    truth.require_unique("item_id", truth_ids)
    truth_labels = truth.labels("cluster_id")
    weight = truth.weights("weight") if "weight" in truth.names else None
    pred_ids, pred_labels = _read_clustering(pred_path, as_text=False)
    kept, truth_ids, truth_labels, pred_labels, dropped = _common_items(
        truth_path, truth_ids, truth_labels, pred_path, pred_ids, pred_labels
    )
    if weight is None:
        weight = unit_weights(len(kept))
    elif len(kept) < len(weight):
        weight = weight[kept]
    return ItemTable(truth.path, truth_ids, truth_labels, pred_labels, weight, {}, dropped)


def _common_items(
    base_path: Any, base_ids: pa.Array, base_labels: pa.Array, exp_path: Any, exp_ids: pa.Array, exp_labels: pa.Array
) -> tuple[np.ndarray, pa.Array, pa.Array, pa.Array, int]:
    """The items in both files, in the first file's order: ``(kept rows of the first file,
    ids, first labels, second labels aligned to them, items dropped from either file)``."""
    in_exp = matched_positions(base_ids, exp_ids)
    kept = np.flatnonzero(in_exp >= 0)
    if len(kept) == 0:
        raise InputError(exp_path, f"no item_id in common with {base_path}")
    if len(kept) < len(base_ids):
        base_ids, base_labels = base_ids.take(kept), base_labels.take(kept)
    order = in_exp[kept]
    if not np.array_equal(order, np.arange(len(exp_ids))):
        exp_labels = exp_labels.take(order)
    dropped = (len(in_exp) - len(kept)) + (len(exp_ids) - len(kept))
    return kept, base_ids, base_labels, exp_labels, dropped


def read_pairs(path: Any, *, distinct: bool = False) -> PairsTable:
    """Read a pair sample: ``i, j, pair_class, stratum, draws, scheme``. Raises :class:`InputError`.

    A repeated ``(i, j)`` is allowed (concatenated batch files: its draws add up downstream)
    unless ``distinct`` is true.
    """
    src = TableSource.open(path, required=PAIR_COLUMNS)
    i, j = _exported_ids(src, "i"), _exported_ids(src, "j")
    pair_class = src.choices("pair_class", PAIR_CLASSES)
    stratum = src.choices("stratum", STRATA)
    draws = src.counts("draws")
    scheme = src.ids("scheme")
    first = scheme[0].as_py()
    if first not in SCHEMES:
        raise src.error(f"scheme {first!r} is not one of {', '.join(SCHEMES)}", row=0)
    other = pc.not_equal(scheme, first)
    if pc.any(other).as_py():
        row = pc.index(other, True).as_py()
        raise src.error(f"scheme {scheme[row].as_py()!r} differs from {first!r} on the first row", row=row)
    if distinct:
        src.require_distinct_pairs(i, j)
    return PairsTable(src.path, i, j, pair_class, stratum, draws, first)


def read_judgements(path: Any, *, with_rater: bool = False) -> JudgementsTable:
    """Read verdicts: ``i, j, verdict``; a header with no rows means nothing is judged yet.

    Rows with ``i == j`` are allowed (self pairs are always equivalent and are
    ignored downstream). ``with_rater``: the ``rater`` column is required too, a
    non-empty id on every row but *unsure* ones, which observe nothing of a rater
    (the app's export closes a pair excluded without a verdict with an *unsure* row
    and no rater); otherwise it is not read. Raises :class:`InputError`.
    """
    required = JUDGEMENT_COLUMNS + ("rater",) if with_rater else JUDGEMENT_COLUMNS
    src = TableSource.open(path, required=required, allow_no_rows=True)
    verdict = src.choices("verdict", VERDICTS)
    rater = None
    if with_rater:
        rater = src.ids_where("rater", required=verdict != VERDICTS.index("unsure"))
        rater = unquote_spreadsheet_text(rater) if src.kind == "csv" else rater
    return JudgementsTable(src.path, _exported_ids(src, "i"), _exported_ids(src, "j"), verdict, rater)


def _exported_ids(src: TableSource, name: str) -> pa.Array:
    """Item ids of a pair or verdict file; in CSV, as a spreadsheet-safe export wrote them."""
    values = src.ids(name)
    return unquote_spreadsheet_text(values) if src.kind == "csv" else values


def unquote_spreadsheet_text(values: pa.Array) -> pa.Array:
    """Text as it was before a spreadsheet-safe CSV export: one leading quote removed where
    quotes precede a character that starts a formula (``'=x`` is ``=x``, ``''@y`` is ``'@y``).

    Examples
    --------
    >>> import pyarrow as pa
    >>> unquote_spreadsheet_text(pa.array(["'=x", "''@y", "'a", "-1"])).to_pylist()
    ['=x', "'@y", "'a", '-1']
    """
    return pc.replace_substring_regex(values, pattern="^'('*[=+\\-@\t\r])", replacement="\\1")


def _read_clustering(path: Any, *, as_text: bool = True) -> tuple[pa.Array, pa.Array]:
    src = TableSource.open(path, required=("item_id", "cluster_id"))
    ids, labels = src.ids("item_id", as_text=as_text), src.labels("cluster_id")
    src.require_unique("item_id", ids)
    return ids, labels


def _read_weights_for(path: Any, item_ids: pa.Array) -> np.ndarray:
    src = TableSource.open(path, required=("item_id", "weight"))
    ids = src.ids("item_id", as_text=False)
    src.require_unique("item_id", ids)
    weight = src.weights("weight")
    at = matched_positions(item_ids, ids)
    if (at < 0).any():
        missing = _id_text(item_ids, int(np.flatnonzero(at < 0)[0]))
        raise InputError(path, f"no weight for item_id {missing!r}")
    return weight[at]


def _id_text(ids: pa.Array, row: int) -> str:
    """The id at ``row`` as its text, as an error names it (an integer id as its decimal)."""
    return as_string(ids.slice(row, 1))[0].as_py()
