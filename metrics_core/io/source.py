"""One input file read into a pyarrow table, and the checks on its columns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._validation import weight_span_message, weight_span_problem
from .errors import InputError, place_text
from .formats import (
    csv_names,
    format_of,
    parquet_schema,
    read_csv_columns,
    read_csv_head,
    read_parquet_columns,
    read_parquet_head,
    require_nonempty_file,
)
from .integer_text import canonical_integers
from .lines import lines_of

# ---------------------------------------------------------------------------- one input file


@dataclass(frozen=True)
class TableSource:
    """One input file read into a pyarrow table, and the checks on its columns.

    The readers of this package are built on it; ``TableSource.open(path, required=...,
    optional=..., keep_others=...)`` reads any other table (an item catalogue, say) with the
    same validation and error messages.
    """

    path: str
    kind: str
    table: pa.Table
    complete: bool = True  # False: the table holds the file's first rows only (``head_rows``)

    @classmethod
    def open(
        cls,
        path: Any,
        *,
        required: tuple[str, ...],
        optional: tuple[str, ...] = (),
        keep_others: bool = False,
        allow_no_rows: bool = False,
        head_rows: int | None = None,
        head_bytes: int = 4 << 20,
    ) -> TableSource:
        """``head_rows``: read at most that many rows, and of a CSV file at most its first
        ``head_bytes`` (whole records), to check a file's start in bounded time and memory."""
        kind = format_of(path)
        require_nonempty_file(path)
        names = csv_names(path) if kind == "csv" else parquet_schema(path).names
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise InputError(path, f"duplicate column {duplicated[0]!r}")
        missing = [name for name in required if name not in names]
        if missing:
            found = ", ".join(repr(name) for name in names)
            problem = f"missing column {', '.join(map(repr, missing))} (columns found: {found})"
            raise InputError(path, problem + _delimiter_hint(names) if kind == "csv" else problem)
        wanted = names if keep_others else [n for n in names if n in required or n in optional]
        complete = True
        if head_rows is not None and kind == "csv":
            table, complete = read_csv_head(path, wanted, names, head_rows, head_bytes)
        elif head_rows is not None:
            table, complete = read_parquet_head(path, wanted, head_rows)
        else:
            table = read_csv_columns(path, wanted, names) if kind == "csv" else read_parquet_columns(path, wanted)
        table = _one_chunk(table)
        # Arrow's allocator keeps the blocks that reading freed (a third of the data, say): give
        # them back before the work on the columns needs memory of its own.
        pa.default_memory_pool().release_unused()
        if table.num_rows == 0 and not allow_no_rows:
            raise InputError(path, "no data rows")
        return cls(str(path), kind, table, complete)

    @property
    def names(self) -> list[str]:
        return self.table.column_names

    @property
    def n_rows(self) -> int:
        return self.table.num_rows

    def error(self, problem: str, *, row: int) -> InputError:
        return InputError.at_row(self.path, row, problem, n_rows=self.n_rows if self.complete else None)

    def place(self, row: int) -> str:
        return place_text(row, lines_of(self.path, [row], self.n_rows if self.complete else None)[0])

    def ids(self, name: str, *, as_text: bool = True) -> pa.Array:
        """A column of non-empty text (integers in Parquet become text), or with ``as_text=False``
        of ids in their type: a Parquet file's integers stay integers, and a CSV column of integers
        written canonically (:mod:`.integer_text`) becomes int64, as the same ids in Parquet are."""
        values = self._typed(name, _is_text_or_integer, "text or integers")
        if as_text or not pa.types.is_integer(values.type):
            values = as_string(values)
        self._require_present(name, values)
        if not as_text and self.kind == "csv":
            integers = canonical_integers(values)
            return values if integers is None else integers
        return values

    def ids_where(self, name: str, required: np.ndarray) -> pa.Array:
        """A column of text, non-empty on the ``required`` rows and ``""`` where it is missing elsewhere."""
        values = as_string(self._typed(name, _is_text_or_integer, "text or integers"))
        values = pc.fill_null(values, "")
        missing = _text_lengths(values) == 0
        if np.any(missing & required):
            raise self.error(f"empty {name}", row=int(np.argmax(missing & required)))
        self.require_no_nul(name, values)
        return values

    def labels(self, name: str) -> pa.Array:
        """Cluster ids in their type, as :meth:`ids` reads them with ``as_text=False``: so the
        same clusterings in a CSV and a Parquet file give the same population and results."""
        return self.ids(name, as_text=False)

    def weights(self, name: str) -> np.ndarray:
        """Positive finite float64 weights, spanning at most 2**200 (``metrics_core._validation``)."""
        values = self.numbers(name, pa.float64(), "a number")
        weight = values.to_numpy(zero_copy_only=False)
        # Two reductions with no N-sized mask: a NaN makes both comparisons false.
        if not (weight.min(initial=np.inf) > 0 and weight.max(initial=0.0) < np.inf):
            bad = ~(np.isfinite(weight) & (weight > 0))
            row = int(np.flatnonzero(bad)[0])
            text = self._text_at(name, row)
            problem = "is not finite" if not np.isfinite(weight[row]) else "must be greater than 0"
            raise self.error(f"{name} {text} {problem}", row=row)
        with np.errstate(over="ignore"):
            total = weight.sum()
        if not np.isfinite(total):
            raise InputError(self.path, f"the {name}s add up to more than a float64 holds: scale them down")
        span = weight_span_problem(weight)
        if span is not None:
            row, other, heavier = span
            blamed = f"{name} {self._text_at(name, row)}"
            named = f"the {name} {self._text_at(name, other)} on {self.place(other)}"
            raise self.error(weight_span_message(blamed, named, heavier=heavier), row=row)
        return weight

    def counts(self, name: str) -> np.ndarray:
        """Integers >= 1 (int64)."""
        values = self.numbers(name, pa.int64(), "an integer").to_numpy(zero_copy_only=False)
        if (values < 1).any():
            row = int(np.flatnonzero(values < 1)[0])
            raise self.error(f"{name} {self._text_at(name, row)} must be at least 1", row=row)
        return values

    def numbers(self, name: str, target: pa.DataType, what: str) -> pa.Array:
        """The column cast to ``target``; text is trimmed, then must parse exactly."""
        values = self._typed(name, _is_text_or_number, "numbers")
        if _is_text(values.type):
            values = pc.utf8_trim_whitespace(values)
        self._require_present(name, values)
        try:
            return pc.cast(values, target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            row = _first_cast_failure(values, target)
            raise self.error(f"{name} {self._text_at(name, row)} is not {what}", row=row) from None

    def choices(self, name: str, allowed: tuple[str, ...]) -> np.ndarray:
        """Int8 codes into ``allowed`` of a text column."""
        values = self.ids(name)
        codes = pc.index_in(values, value_set=pa.array(allowed, type=values.type))
        if codes.null_count:
            row = pc.index(pc.is_null(codes), True).as_py()
            raise self.error(f"{name} {values[row].as_py()!r} is not one of {', '.join(allowed)}", row=row)
        return codes.to_numpy(zero_copy_only=False).astype(np.int8)

    def require_unique(self, name: str, values: pa.Array, n_distinct: int | None = None) -> None:
        if pa.types.is_integer(values.type):
            if _distinct_integers(values.to_numpy(zero_copy_only=False)):
                return
            values = as_string(values)  # the error names the id as text, as it is read
        if (_count_distinct(values) if n_distinct is None else n_distinct) == len(values):
            return
        first = pc.index_in(values, value_set=values).to_numpy(zero_copy_only=False)
        row = int(np.flatnonzero(first != np.arange(len(values)))[0])
        problem = f"duplicate {name} {values[row].as_py()!r} (first on {self.place(int(first[row]))})"
        raise self.error(problem, row=row)

    def require_distinct_pairs(self, i: pa.Array, j: pa.Array) -> None:
        ids = pc.unique(pa.chunked_array([i, j]).combine_chunks())
        key = codes_in(i, ids) * len(ids) + codes_in(j, ids)
        _, first = np.unique(key, return_index=True)
        if len(first) == len(key):
            return
        row = int(np.setdiff1d(np.arange(len(key)), first)[0])
        earlier = int(np.flatnonzero(key == key[row])[0])
        problem = f"duplicate pair ({i[row].as_py()!r}, {j[row].as_py()!r}) (first on {self.place(earlier)})"
        raise self.error(problem, row=row)

    def require_no_nul(self, name: str, values: pa.Array) -> None:
        """Text without NUL characters (PostgreSQL cannot store them; no id or title needs one)."""
        has_nul = pc.match_substring(values, "\x00")
        if pc.any(has_nul).as_py():
            raise self.error(f"{name} holds a NUL character (\\x00)", row=pc.index(has_nul, True).as_py())

    def _typed(self, name: str, ok: Callable[[pa.DataType], bool], expected: str) -> pa.Array:
        values = combined_array(self.table.column(name))
        if pa.types.is_dictionary(values.type):
            values = values.dictionary_decode()
        if not ok(values.type):
            raise InputError(self.path, f"column {name!r} has type {values.type}; expected {expected}")
        return values

    def _require_present(self, name: str, values: pa.Array) -> None:
        if values.null_count:
            row = pc.index(pc.is_null(values), True).as_py()
            raise self.error(f"missing {name} (null)", row=row)
        if _is_text(values.type):
            empty = _text_lengths(values) == 0
            if empty.any():
                raise self.error(f"empty {name}", row=int(np.argmax(empty)))
            self.require_no_nul(name, values)

    def _text_at(self, name: str, row: int) -> str:
        return repr(combined_array(self.table.column(name))[row].as_py())


# Separators a CSV file is often written with instead of commas (spreadsheets in many locales use ';').
OTHER_DELIMITERS = {";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def _delimiter_hint(names: list[str]) -> str:
    """When the header is one column holding another separator, say so: the file is not comma-separated."""
    if len(names) != 1:
        return ""
    for delimiter, called in OTHER_DELIMITERS.items():
        if delimiter in names[0]:
            return f"; the header is one column: the file seems separated by {called}, not commas"
    return ""


def _one_chunk(table: pa.Table) -> pa.Table:
    """The table with each column in one chunk, combined one column at a time: the chunks of a
    column are released as soon as it is combined, so the file's data is held once, not twice."""
    names = table.column_names
    columns = []
    for name in names:
        columns.append(combined_array(table.column(name)))
        table = table.drop_columns([name])
    return pa.table(columns, names=names)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_text_or_integer(t: pa.DataType) -> bool:
    return _is_text(t) or pa.types.is_integer(t)


def _is_text_or_number(t: pa.DataType) -> bool:
    return _is_text_or_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def _count_distinct(values: pa.Array) -> int:
    return len(pc.unique(values))


def _distinct_integers(values: np.ndarray, block: int = 1 << 20) -> bool:
    """Whether no integer repeats: marks in a bitmap of their range when it is small (ids
    0..N-1, say), else a sorted copy; no hash table either way."""
    if len(values) == 0:
        return True
    low, high = int(values.min()), int(values.max())
    if high - low < 8 * len(values) + 1024:
        seen = np.zeros(high - low + 1, dtype=bool)
        for start in range(0, len(values), block):
            seen[values[start : start + block].astype(np.int64) - low] = True
        return int(np.count_nonzero(seen)) == len(values)
    ordered = np.sort(values)
    return not bool(np.any(ordered[1:] == ordered[:-1]))


def _text_lengths(values: pa.Array) -> np.ndarray:
    """Byte length of each string, straight from the offsets buffer (no copy, no kernel)."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    offset_type = np.int64 if pa.types.is_large_string(values.type) else np.int32
    offsets = np.frombuffer(values.buffers()[1], dtype=offset_type)[values.offset : values.offset + len(values) + 1]
    return np.diff(offsets)


def combined_array(values: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    return values


def as_string(values: pa.Array) -> pa.Array:
    """Text as ``pa.string()``, or ``large_string`` past 2 GiB of characters."""
    if pa.types.is_string(values.type):
        return values
    try:
        return pc.cast(values, pa.string())
    except pa.ArrowInvalid:
        return pc.cast(values, pa.large_string())


def arrow_array(values: Any) -> pa.Array:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return combined_array(values)
    array = np.asarray(values)
    return pa.array(array.astype(object) if array.dtype.kind == "U" else array)


def labels_for_population(labels: pa.Array) -> Any:
    return labels.to_numpy() if pa.types.is_integer(labels.type) else labels


def codes_in(values: pa.Array, value_set: pa.Array) -> np.ndarray:
    """Index of each value in ``value_set``, -1 where absent (int64)."""
    return pc.fill_null(pc.index_in(values, value_set=value_set), -1).to_numpy(zero_copy_only=False).astype(np.int64)


def _first_cast_failure(values: pa.Array, target: pa.DataType, block: int = 1 << 16) -> int:
    """Index of the first value that does not cast: blocks first, then one by one."""
    for start in range(0, len(values), block):
        chunk = values.slice(start, block)
        try:
            pc.cast(chunk, target)
            continue
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        for k in range(len(chunk)):
            try:
                pc.cast(chunk.slice(k, 1), target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return start + k
    raise AssertionError("the cast failed as a whole but on no single value")
