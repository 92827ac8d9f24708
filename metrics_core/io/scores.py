"""SCORES files: one automatic score per pair of items, for model-assisted estimates (abcde-spec §15).

Columns ``i``, ``j`` (the ids of the pair's two items, as in a PAIRS file) and ``score`` (any
finite real number; higher means more likely equivalent). A pair is unordered: the score of
``(a, b)`` is that of ``(b, a)``, so a file holds each pair once, in either order. Ids are read
as PAIRS ids are, as text (a Parquet file's integers as their decimal text; in CSV, the one
leading quote of a spreadsheet-safe export removed), so the two files' ids compare as they
read. Matching is vectorised: one hash pass over the ids of both files, then a sort of the
pairs' keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import InputError, place_text
from .formats import check_output_path, write_table
from .lines import lines_of
from .source import TableSource, arrow_array, as_string, combined_array
from .tables import unquote_spreadsheet_text

SCORE_COLUMNS = ("i", "j", "score")


@dataclass(frozen=True, eq=False)
class ScoresTable:
    """A validated SCORES file: distinct unordered pairs of item ids and their finite scores."""

    path: str
    i: pa.Array
    j: pa.Array
    score: np.ndarray

    def __len__(self) -> int:
        return len(self.i)


def read_scores(path: Any) -> ScoresTable:
    """Read a SCORES file: ``i, j, score``. Raises :class:`InputError` naming the file, line and problem:
    a missing, non-numeric or non-finite score, an empty id, or a pair given twice (in either order)."""
    table, _, _ = _read_keyed(path)
    return table


def read_scores_for_pairs(
    path: Any, i: Any, j: Any, *, pairs_path: Any = None, pair_rows: np.ndarray | None = None
) -> np.ndarray:
    """The score of each pair ``(i[k], j[k])`` (the rows of a PAIRS file) from the SCORES file ``path``.

    A pair matches a SCORES row in either order; rows of SCORES that no pair needs are ignored.
    ``i`` and ``j`` are item ids as :func:`~metrics_core.io.read_pairs` reads them (text; integers
    are compared as their decimal text). Returns float64, one score per pair. Raises
    :class:`InputError`: any problem of :func:`read_scores`, or a pair with no score, named
    (with its line of ``pairs_path`` when given: pair ``k`` is data row ``pair_rows[k]`` of that
    file, or row ``k`` without ``pair_rows``, for pairs that are some of its rows only).
    """
    if len(i) != len(j):
        raise ValueError(f"i and j differ in length ({len(i)} and {len(j)})")
    scores, keys, order = _read_keyed(path, (i, j))
    pair_keys = keys[len(scores) :]
    sorted_keys = keys[: len(scores)][order]
    # Looked up in sorted order: a search that walks the keys in order, not all over them (twice as fast).
    by_key = np.argsort(pair_keys)
    at = np.empty(len(pair_keys), dtype=np.int64)
    at[by_key] = np.searchsorted(sorted_keys, pair_keys[by_key])
    at = np.minimum(at, max(len(sorted_keys) - 1, 0))
    found = sorted_keys[at] == pair_keys if len(sorted_keys) else np.zeros(len(pair_keys), dtype=bool)
    if not found.all():
        row = int(np.argmin(found))
        pair_i, pair_j = (as_string(arrow_array(ids).slice(row, 1))[0].as_py() for ids in (i, j))
        where = ""
        if pairs_path is not None:
            file_row = row if pair_rows is None else int(pair_rows[row])
            n_rows = len(pair_keys) if pair_rows is None else None
            where = f" (on {place_text(file_row, lines_of(pairs_path, [file_row], n_rows)[0])} of {pairs_path})"
        missing = int(np.count_nonzero(~found))
        also = f"; {missing} of {len(pair_keys)} pairs have none" if missing > 1 else ""
        raise InputError(path, f"no score for pair ({pair_i!r}, {pair_j!r}){where}{also}")
    return scores.score[order[at]]


def write_scores(path: Any, *, i: Any, j: Any, score: Any) -> None:
    """Write a SCORES file (CSV or Parquet by extension), all or nothing (:func:`~metrics_core.io.write_tables`).

    In CSV, an id that the reader would take for a spreadsheet-safe quote (quotes before ``=``,
    ``+``, ``-``, ``@``, a tab or a carriage return) gets one more quote, so that it reads back as
    it was. Raises ``ValueError`` for columns of different lengths or a score that is not finite,
    :class:`InputError` for a path that cannot be written.
    """
    kind = check_output_path(path)
    first, second = arrow_array(i), arrow_array(j)
    values = np.asarray(score, dtype=np.float64)
    if values.ndim != 1 or not len(first) == len(second) == len(values):
        raise ValueError(
            f"i, j and score must be one-dimensional and of one length, got {len(first)}, {len(second)}, {values.shape}"
        )
    if not np.isfinite(values).all():
        raise ValueError(
            f"score {values[~np.isfinite(values)][0]} at position {int(np.argmin(np.isfinite(values)))} is not finite"
        )
    if kind == "csv":
        first, second = _quoted_for_reading(first), _quoted_for_reading(second)
    write_table(path, {"i": first, "j": second, "score": values})


def _quoted_for_reading(ids: pa.Array) -> pa.Array:
    """Text ids with one more leading quote where :func:`unquote_spreadsheet_text` would remove one."""
    if not (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)) or not starts_with_quote(ids):
        return ids
    return pc.replace_substring_regex(ids, pattern="^('+[=+\\-@\t\r])", replacement="'\\1")


def starts_with_quote(ids: pa.Array) -> bool:
    """Whether any id starts with a quote: only then can a spreadsheet-safe quote be at stake (a
    cheap test that spares the regular expression on ordinary ids)."""
    return bool(pc.any(pc.starts_with(ids, "'")).as_py())


def _read_keyed(path: Any, pairs: tuple[Any, Any] | None = None) -> tuple[ScoresTable, np.ndarray, np.ndarray]:
    """The SCORES table, the unordered key of each of its pairs followed by those of ``pairs``
    (both files' ids coded together), and the order that sorts its keys (stable)."""
    src = TableSource.open(path, required=SCORE_COLUMNS)
    ids = {name: src.ids(name) for name in ("i", "j")}
    if src.kind == "csv":
        ids = {name: unquote_spreadsheet_text(v) if starts_with_quote(v) else v for name, v in ids.items()}
    score = _finite(src)
    columns = [ids["i"], ids["j"]]
    if pairs is not None:
        columns += [as_string(arrow_array(values)) for values in pairs]
    codes = _codes(columns)
    n = len(score)
    first, second = codes[0], codes[1]
    keys = [_unordered_key(first, second)]
    if pairs is not None:
        keys.append(_unordered_key(codes[2], codes[3]))
    key = np.concatenate(keys)
    order = np.argsort(key[:n], kind="stable")
    _require_distinct(src, ids["i"], ids["j"], key[:n], order)
    return ScoresTable(src.path, ids["i"], ids["j"], score), key, order


def _finite(src: TableSource) -> np.ndarray:
    score = src.numbers("score", pa.float64(), "a number").to_numpy(zero_copy_only=False)
    # Two reductions and no N-sized mask; a NaN propagates to both.
    if not (np.isfinite(score.min(initial=0.0)) and np.isfinite(score.max(initial=0.0))):
        row = int(np.argmin(np.isfinite(score)))
        text = repr(combined_array(src.table.column("score"))[row].as_py())
        raise src.error(f"score {text} is not finite", row=row)
    return score


def _codes(columns: list[pa.Array]) -> list[np.ndarray]:
    """Each column's ids as codes of one dictionary of all their ids (int64): one hash pass."""
    large = any(pa.types.is_large_string(values.type) for values in columns)
    typed = [values.cast(pa.large_string()) if large else values for values in columns]
    try:
        together = pa.concat_arrays(typed)
    except pa.ArrowInvalid:  # past 2 GiB of text in all
        together = pa.concat_arrays([values.cast(pa.large_string()) for values in typed])
    codes = pc.dictionary_encode(together).indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return np.split(codes, np.cumsum([len(values) for values in columns])[:-1])


def _unordered_key(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """One int64 per pair, the same for ``(a, b)`` and ``(b, a)`` (codes below 2**31)."""
    low, high = np.minimum(first, second), np.maximum(first, second)
    return (low << 32) | high


def _require_distinct(src: TableSource, i: pa.Array, j: pa.Array, key: np.ndarray, order: np.ndarray) -> None:
    ordered = key[order]
    repeated = np.flatnonzero(ordered[1:] == ordered[:-1]) + 1
    if len(repeated) == 0:
        return
    row = int(order[repeated].min())  # the first row that repeats an earlier one
    earlier = int(np.flatnonzero(key == key[row])[0])
    problem = f"duplicate pair ({i[row].as_py()!r}, {j[row].as_py()!r}) (first on {src.place(earlier)})"
    raise src.error(problem, row=row)
