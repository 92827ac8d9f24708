"""CSV and Parquet: reading, line numbers for errors, and all-or-nothing writing."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from .errors import InputError

FORMATS: dict[str, str] = {".csv": "csv", ".parquet": "parquet"}


# ---------------------------------------------------------------------------- file formats


def format_of(path: Any) -> str:
    """``"csv"`` or ``"parquet"`` from the extension; :class:`InputError` otherwise."""
    kind = FORMATS.get(Path(str(path)).suffix.lower())
    if kind is None:
        raise InputError(path, "unsupported file type: use a .csv or .parquet file")
    return kind


def require_nonempty_file(path: Any) -> None:
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    if not os.path.isfile(path):
        raise InputError(path, "not a file")
    if not os.access(path, os.R_OK):
        raise InputError(path, "cannot read: permission denied")
    if size == 0:
        raise InputError(path, "empty file")


@contextlib.contextmanager
def _reading(failure: Callable[[Exception], Exception]) -> Iterator[None]:
    """Arrow's and the system's errors while reading a file as ``failure(error)`` (an InputError
    that names the file, or the error itself for a caller that looks into it). Running out of
    memory is no fault of the file: MemoryError, also when Arrow could not start a thread (a capped
    address space leaves no room for its stack)."""
    try:
        yield
    except MemoryError:
        raise
    except (pa.ArrowException, OSError) as exc:
        if _out_of_resources(exc):
            raise MemoryError(f"out of memory while reading: {exc}") from exc
        raise failure(exc) from None


# How Arrow says that memory or threads ran out (it raises a plain ArrowException for a thread).
_OUT_OF_RESOURCES = ("Failed to launch worker thread", "Out of memory", "Cannot allocate memory")


def _out_of_resources(exc: Exception) -> bool:
    if isinstance(exc, OSError) and exc.errno in (errno.ENOMEM, errno.EAGAIN):
        return True
    return any(sign in str(exc) for sign in _OUT_OF_RESOURCES)


def _not_parquet(path: Any) -> Callable[[Exception], InputError]:
    return lambda exc: InputError(path, f"not a readable Parquet file ({exc})")


def parquet_schema(path: Any) -> pa.Schema:
    with _reading(_not_parquet(path)):
        return pq.read_schema(path)


def read_parquet_columns(path: Any, columns: list[str]) -> pa.Table:
    """The columns, each read by row groups into one array (numbers straight into one buffer)."""
    with _reading(_not_parquet(path)), pq.ParquetFile(path) as file:
        return pa.table([_parquet_column(file, name) for name in columns], names=columns)


def _parquet_column(file: pq.ParquetFile, name: str, batch: int = 1 << 14) -> pa.Array:
    """One column: a number column without nulls is copied batch by batch into one numpy
    buffer (no chunks to combine afterwards); any other column is read whole and combined.

    Batches of 16Ki rows (128 KiB of numbers) stay below the command line's 1 MiB mmap
    threshold (``metrics_core.cli.lean_allocation``), so each reuses the last one's memory instead
    of fresh zeroed pages: a fifth of the page faults, and a quarter less CPU, on 10M items."""
    kind = file.schema_arrow.field(name).type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        out = np.empty(file.metadata.num_rows, dtype=kind.to_pandas_dtype())
        at = 0
        for part in file.iter_batches(batch_size=batch, columns=[name], use_threads=False):
            values = part.column(0)
            if values.null_count:
                break  # keep the nulls for the checks that name their row
            out[at : at + len(values)] = values.to_numpy()
            at += len(values)
        else:
            if at == len(out):
                return pa.array(out)  # numpy's buffer, not copied
    # On this thread: Arrow's pool threads, started under a worker's memory cap (RLIMIT_AS), abort
    # the process when an allocation fails (std::bad_alloc, or glibc's thread-local data), where this
    # thread raises MemoryError. One column gains little from them.
    column = file.read(columns=[name], use_threads=False).column(0)
    return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)


def csv_names(path: Any) -> list[str]:
    with _reading(lambda exc: _csv_failure(path, exc)):
        with pcsv.open_csv(path, read_options=pcsv.ReadOptions(use_threads=False)) as reader:
            return reader.schema.names


def read_csv_columns(path: Any, columns: list[str], names: list[str]) -> pa.Table:
    convert = pcsv.ConvertOptions(column_types={name: pa.string() for name in columns}, include_columns=columns)
    with _reading(lambda exc: _csv_failure(path, exc, convert, names)):
        # Blocks of 16 MiB rather than 1 MiB: fewer chunks to combine, and faster on 10M rows.
        return pcsv.read_csv(path, read_options=pcsv.ReadOptions(block_size=1 << 24), convert_options=convert)


def read_parquet_head(path: Any, columns: list[str], rows: int) -> tuple[pa.Table, bool]:
    """The first ``rows`` rows of the columns, and whether they are the whole file."""
    with _reading(_not_parquet(path)), pq.ParquetFile(path) as file:
        first = next(file.iter_batches(batch_size=rows, columns=columns, use_threads=False), None)
        complete = file.metadata.num_rows <= rows
        schema = file.schema_arrow
    if first is None:
        return pa.table({name: pa.array([], type=schema.field(name).type) for name in columns}), complete
    return pa.Table.from_batches([first]), complete


def read_csv_head(path: Any, columns: list[str], names: list[str], rows: int, max_bytes: int) -> tuple[pa.Table, bool]:
    """The rows in the first ``max_bytes`` of the file (at most ``rows``), and whether they are
    the whole file; a bad record among them is reported with its line, as by :func:`read_csv_columns`."""
    convert = pcsv.ConvertOptions(column_types={name: pa.string() for name in columns}, include_columns=columns)
    bad: list[Any] = []

    def remember(row: Any) -> str:
        bad.append(row)
        return "skip"

    options = pcsv.ReadOptions(block_size=max_bytes, use_threads=False)
    with (
        _reading(lambda exc: _csv_failure(path, exc, convert, names, head_bytes=max_bytes)),
        pcsv.open_csv(
            path,
            read_options=options,
            parse_options=pcsv.ParseOptions(invalid_row_handler=remember),
            convert_options=convert,
        ) as reader,
    ):
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            batch = None
        schema = reader.schema
    if bad:
        problem = f"expected {bad[0].expected_columns} columns, got {bad[0].actual_columns}"
        if bad[0].number < 2:  # the reader did not know the record
            raise InputError(path, problem)
        raise InputError.at_row(path, bad[0].number - 2, problem)
    complete = os.stat(path).st_size <= max_bytes and (batch is None or batch.num_rows <= rows)
    if batch is None:
        return schema.empty_table(), complete
    return pa.Table.from_batches([batch.slice(0, rows)]), complete


def _csv_failure(
    path: Any,
    exc: Exception,
    convert: pcsv.ConvertOptions | None = None,
    names: list[str] | None = None,
    *,
    head_bytes: int | None = None,
) -> InputError:
    """Turn a pyarrow CSV error into an InputError with its line.

    The multi-threaded reader does not say which row failed, so re-read on one
    thread (error path only), which does; ``head_bytes``: only that much of the file.
    """
    message = str(exc)
    if "Empty CSV file" in message:
        return InputError(path, "no header row" if not _has_text(path) else "no data rows")
    bad: list[Any] = []

    def remember(row: Any) -> str:
        bad.append(row)
        return "error"

    try:
        with _reading(lambda again: again):
            _reread_one_thread(path, remember, convert or pcsv.ConvertOptions(), head_bytes)
    except (pa.ArrowException, OSError) as again:
        message = str(again)
    if bad:
        record, problem = bad[0].number, f"expected {bad[0].expected_columns} columns, got {bad[0].actual_columns}"
    else:
        found = re.search(r"Row #(\d+)", message)
        record = int(found.group(1)) if found else None
        problem = re.sub(r"^(CSV parse error: )?(In CSV column #\d+: )?(Row #\d+: )?", "", message)
        column = re.search(r"In CSV column #(\d+)", message)
        if "invalid UTF8" in problem and column and names and int(column.group(1)) < len(names):
            problem = f"{names[int(column.group(1))]} is not valid UTF-8 text"
        elif "invalid UTF8" in problem:
            problem = "text is not valid UTF-8"
    if record is None or record < 2:
        return InputError(path, problem)
    return InputError.at_row(path, record - 2, problem)


def _reread_one_thread(path: Any, remember: Any, convert: pcsv.ConvertOptions, head_bytes: int | None) -> None:
    parse = pcsv.ParseOptions(invalid_row_handler=remember)
    if head_bytes is None:
        pcsv.read_csv(
            path, read_options=pcsv.ReadOptions(use_threads=False), parse_options=parse, convert_options=convert
        )
        return
    options = pcsv.ReadOptions(block_size=head_bytes, use_threads=False)
    with pcsv.open_csv(path, read_options=options, parse_options=parse, convert_options=convert) as reader:
        next(iter(reader), None)


def _has_text(path: Any) -> bool:
    with open(path, "rb") as f:
        return bool(f.read(1 << 16).strip())


# ---------------------------------------------------------------------------- writing


def write_table(path: Any, columns: Mapping[str, Any]) -> None:
    """Write one table (CSV or Parquet by extension) atomically; see :func:`write_tables`."""
    write_tables({path: columns})


def write_tables(tables: Mapping[Any, Mapping[str, Any]]) -> None:
    """Write several tables, all or none.

    Each table goes to a temporary file next to its target, and the files are
    moved into place only once all of them are written, so a failure leaves no
    partial file. Float NaN and infinities are written as nulls (empty in CSV):
    undefined numbers are null, as in the JSON output. A folder that cannot be
    written raises :class:`InputError`.
    """
    kinds = {path: check_output_path(path) for path in tables}
    staged: list[tuple[str, Any]] = []
    current = None
    try:
        for current, columns in tables.items():
            staged.append((_write_temporary(current, kinds[current], _arrow_table(columns)), current))
        for temporary, current in staged:
            os.replace(temporary, current)
    except OSError as exc:
        reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))
        raise InputError(current, f"cannot write: {reason}") from None
    finally:
        for temporary, _ in staged:
            if os.path.exists(temporary):
                os.remove(temporary)


def check_output_path(path: Any) -> str:
    """The format of an output path, after checking its extension and folder (before any work)."""
    kind = format_of(path)
    folder = Path(str(path)).parent
    if not folder.is_dir():
        raise InputError(path, f"cannot write: folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise InputError(path, f"cannot write: folder {str(folder)!r} is not writable")
    return kind


def _write_temporary(path: Any, kind: str, table: pa.Table) -> str:
    target = Path(str(path))
    # pyarrow creates the file itself, so it gets the usual permissions (umask).
    temporary = str(target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp"))
    try:
        if kind == "csv":
            pcsv.write_csv(table, temporary)
        else:
            pq.write_table(table, temporary)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    return temporary


def _arrow_table(columns: Mapping[str, Any]) -> pa.Table:
    return pa.table({name: _arrow_column(values) for name, values in columns.items()})


def _arrow_column(values: Any) -> pa.Array:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    array = np.asarray(values)
    if array.dtype.kind == "f":
        return pa.array(array, mask=~np.isfinite(array))
    return pa.array(array.astype(object) if array.dtype.kind == "U" else array)
