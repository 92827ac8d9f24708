"""The draw order of a PAIRS file (abcde-spec §14): its ``batch`` and ``positions`` columns.

``positions`` holds a row's positions in its batch's permutation of the batch's draws, 0-based,
ascending and space-separated, as many as ``draws``; ``batch`` the batch (0 when the column is
absent). :func:`read_pair_order` checks them, :func:`positions_text` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .formats import csv_names, format_of, parquet_schema
from .source import TableSource


@dataclass(frozen=True, eq=False)
class PairOrder:
    """Each PAIRS row's batch, and its positions: row ``r``'s are ``positions[offsets[r]:offsets[r + 1]]``."""

    batch: np.ndarray  # int64, one per row
    positions: np.ndarray  # int64, one per draw
    offsets: np.ndarray  # int64, rows + 1


def has_positions(path: Any) -> bool:
    """Whether the PAIRS file has a ``positions`` column (read before the file itself)."""
    names = csv_names(path) if format_of(path) == "csv" else parquet_schema(path).names
    return "positions" in names


def read_pair_order(path: Any, draws: np.ndarray) -> PairOrder | None:
    """The ``batch`` and ``positions`` of a PAIRS file whose rows have ``draws``; ``None`` without
    ``positions``. Raises :class:`InputError` naming the row: a count that is not ``draws``, a
    position that is not a non-negative integer, not ascending, outside ``0 .. S_b − 1`` (``S_b``
    the batch's draws) or on another row of the batch too.
    """
    if not has_positions(path):
        return None
    src = TableSource.open(path, required=("positions",), optional=("batch",))
    batch = np.zeros(src.n_rows, dtype=np.int64)
    if "batch" in src.names:
        batch = src.numbers("batch", pa.int64(), "an integer").to_numpy(zero_copy_only=False).astype(np.int64)
        if (batch < 0).any():
            row = int(np.flatnonzero(batch < 0)[0])
            raise src.error(f"batch {int(batch[row])} must be at least 0", row=row)
    text = src.ids("positions")
    parts = pc.split_pattern(pc.utf8_trim_whitespace(text), " ")
    lengths = pc.list_value_length(parts).to_numpy(zero_copy_only=False).astype(np.int64)
    wrong = np.flatnonzero(lengths != draws)
    if len(wrong):
        row = int(wrong[0])
        raise src.error(f"positions has {lengths[row]} numbers; draws is {int(draws[row])}", row=row)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    row_of = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    flat = pc.list_flatten(parts)
    try:
        positions = pc.cast(flat, pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        parsed = pc.match_substring_regex(flat, r"^[0-9]+$").to_numpy(zero_copy_only=False)
        row = int(row_of[np.flatnonzero(~parsed)[0]])
        raise src.error(f"positions {text[row].as_py()!r} are not space-separated integers", row=row) from None
    _check(src, batch, positions, offsets, row_of, draws)
    return PairOrder(batch, positions, offsets)


def _check(src: TableSource, batch, positions, offsets, row_of, draws) -> None:
    if (positions < 0).any():
        row = int(row_of[np.flatnonzero(positions < 0)[0]])
        raise src.error(f"positions {src.table.column('positions')[row].as_py()!r} are not all ≥ 0", row=row)
    later = np.ones(len(positions), dtype=bool)
    later[offsets[:-1][draws > 0]] = False  # a row's first position follows nothing
    descending = later & (np.diff(positions, prepend=0) <= 0)
    if descending.any():
        row = int(row_of[np.flatnonzero(descending)[0]])
        raise src.error("positions are not strictly ascending", row=row)
    size = np.bincount(batch, weights=draws).astype(np.int64)  # S_b, each batch's draws
    out = positions >= size[batch[row_of]]
    if out.any():
        at = int(np.flatnonzero(out)[0])
        row, b = int(row_of[at]), int(batch[row_of[at]])
        raise src.error(f"position {positions[at]} is outside 0..{size[b] - 1}, batch {b}'s draws", row=row)
    order = np.lexsort((row_of, positions, batch[row_of]))
    key_batch, key_position = batch[row_of][order], positions[order]
    same = (key_batch[1:] == key_batch[:-1]) & (key_position[1:] == key_position[:-1])
    if same.any():
        at = int(np.flatnonzero(same)[0])
        first, row = int(row_of[order[at]]), int(row_of[order[at + 1]])
        problem = f"position {key_position[at]} of batch {key_batch[at]} is also on {src.place(first)}"
        raise src.error(problem, row=row)


def positions_text(positions: np.ndarray, draws: np.ndarray) -> pa.Array:
    """The ``positions`` column: each row's positions (``draws[r]`` of them, in row order) joined by spaces.

    Examples
    --------
    >>> positions_text(np.array([3, 0, 4, 1, 2]), np.array([1, 3, 1])).to_pylist()
    ['3', '0 4 1', '2']
    """
    offsets = np.concatenate(([0], np.cumsum(draws))).astype(np.int32 if len(positions) < 2**31 else np.int64)
    values = pc.cast(pa.array(np.asarray(positions, dtype=np.int64)), pa.string())
    kind = pa.ListArray if offsets.dtype == np.int32 else pa.LargeListArray
    return pc.binary_join(kind.from_arrays(pa.array(offsets), values), " ")
