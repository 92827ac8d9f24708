"""Where ids are among the items: integer ids looked up as integers, text ids by hashing.

An integer id read from text must be written as the items' ids are written as text (``7``, not
``007`` or ``+7``), so an id is found or not whichever form it was read in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .source import arrow_array, as_string, codes_in

# A direct table over the ids' range when the range is at most this many times the items (or small):
# 4 bytes a slot, so at most 16 bytes an item, held only while looking up.
DENSE_SPAN = 4


def positions_of_ids(ids: Any, item_ids: pa.Array, item_text: Callable[[], pa.Array]) -> np.ndarray:
    """Position of each of ``ids`` (text, or integers) among ``item_ids``, -1 where unknown (int64):
    integer ids are looked up as integers (``007`` is not ``7``), others as text against
    ``item_text()`` (the items' ids as text, asked for only then)."""
    values = arrow_array(ids)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    integers = integer_ids(item_ids)
    queries = None if integers is None else integer_queries(values)
    if integers is not None and queries is not None:
        return integer_positions(integers, *queries)
    text = item_text()
    return positions_among(pc.cast(as_string(values), text.type), text)


def positions_among(values: pa.Array, among: pa.Array) -> np.ndarray:
    """Position of each of ``values`` in ``among`` (distinct ids of the same type), -1 where absent (int64).

    Examples
    --------
    >>> positions_among(pa.array(["b", "x", "a"]), pa.array(["a", "b"])).tolist()
    [1, -1, 0]
    """
    if len(values) > len(among) // 2:
        return codes_in(values, among)
    # Few ids: hash them and scan the items once, instead of hashing all the items.
    distinct = pc.unique(values)
    match = codes_in(among, distinct)
    position = np.full(len(distinct) + 1, -1, dtype=np.int64)  # last slot: not found
    rows = np.flatnonzero(match >= 0)
    position[match[rows]] = rows
    return position[codes_in(values, distinct)]


def integer_ids(ids: pa.Array) -> np.ndarray | None:
    """Integer ids as int64, or ``None`` when they are not integers or do not fit (uint64 past 2**63 - 1)."""
    if not pa.types.is_integer(ids.type) or ids.null_count:
        return None
    try:
        return pc.cast(ids, pa.int64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:
        return None


def integer_queries(values: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """``values`` as int64 ids and whether each can be an integer id at all (not null; text written as
    an integer is, ``"007"`` is not); ``None`` when some text does not parse as a 64-bit integer.

    Examples
    --------
    >>> ids, usable = integer_queries(pa.array(["7", "007", None, "-3"]))
    >>> ids[usable].tolist(), usable.tolist()
    ([7, -3], [True, False, False, True])
    """
    if pa.types.is_integer(values.type):
        try:
            ids = pc.cast(values, pa.int64())
        except pa.ArrowInvalid:
            return None
        usable = pc.is_valid(ids)
    elif pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        try:
            ids = pc.cast(values, pa.int64())
        except pa.ArrowInvalid:
            return None
        usable = pc.fill_null(pc.equal(pc.cast(ids, values.type), values), False)
    else:
        return None
    return pc.fill_null(ids, 0).to_numpy(zero_copy_only=False), usable.to_numpy(zero_copy_only=False)


def integer_positions(ids: np.ndarray, wanted: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """Position of each ``wanted`` id among ``ids`` (distinct int64), -1 where absent or not ``usable``.

    Examples
    --------
    >>> integer_positions(np.array([30, 10, 20]), np.array([10, 40, 30, 10]), np.array([1, 1, 1, 0], bool)).tolist()
    [1, -1, 0, -1]
    """
    out = np.full(len(wanted), -1, dtype=np.int64)
    if len(ids) == 0:
        return out
    low, high = int(ids.min()), int(ids.max())
    if high - low >= DENSE_SPAN * len(ids) + 1024:
        rows = np.flatnonzero(usable)
        out[rows] = positions_among(pa.array(wanted[rows]), pa.array(ids))
        return out
    table = np.full(high - low + 1, -1, dtype=np.int32 if len(ids) < 2**31 else np.int64)
    table[ids - low] = np.arange(len(ids), dtype=table.dtype)
    rows = np.flatnonzero(usable & (wanted >= low) & (wanted <= high))
    out[rows] = table[wanted[rows] - low]
    return out


def matched_positions(values: pa.Array, among: pa.Array) -> np.ndarray:
    """Position of each of ``values`` (the ids of one file) among ``among`` (the distinct ids of
    another), -1 where absent (int64): as integers when both files' ids are integers, else as text
    (an integer id as its decimal text, as every id was matched before ids kept their type).

    Examples
    --------
    >>> matched_positions(pa.array([7, 3, 5]), pa.array([5, 7])).tolist()
    [1, -1, 0]
    >>> matched_positions(pa.array([7, 3]), pa.array(["007", "7"])).tolist()
    [1, -1]
    """
    ids, wanted = integer_ids(among), integer_ids(values)
    if ids is None or wanted is None:
        return positions_among(as_string(values), as_string(among))
    if len(ids) == len(wanted) and np.array_equal(ids, wanted):
        return np.arange(len(ids), dtype=np.int64)  # the same items in the same order
    return integer_positions(ids, wanted, np.ones(len(wanted), dtype=bool))
