"""Limits on uploads, checked while the request is handled, before anything is stored.

The request already holds each file (Django streams large ones to a temporary file), so
these checks cost one pass in 1 MiB chunks and never parse the whole file: the byte size,
for CSV the line count and NUL bytes (text files never hold them; random or binary data
almost always does), for Parquet the magic bytes, the footer's row count and the size the
file decodes to in memory (a small file that would expand to gigabytes, see
``_expanded_problem``). The content is checked next, on the first rows of each file
(``upload_checks``), and whole by the preparation (metrics_core readers,
raterapp.services.preparation.catalogue), which fails the experiment with the file, row and problem.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings

from metrics_core.io import InputError, format_of

CHUNK = 1 << 20


def upload_limit_problems(*, files: Mapping[str, Any]) -> list[str]:
    """One message per upload over a limit, naming the kind, the file and the problem."""
    problems = []
    for kind in sorted(files):
        upload = files[kind]
        name = os.path.basename(upload.name or "")
        try:
            fmt = format_of(name)
        except InputError:
            continue  # the format problem is reported by the caller
        problem = _size_problem(upload) or (_csv_problem(upload) if fmt == "csv" else _parquet_problem(upload))
        if problem:
            problems.append(f"{kind}: {name}: {problem}")
    return problems


def _size_problem(upload: Any) -> str:
    if (upload.size or 0) > settings.UPLOAD_MAX_BYTES:
        return f"{upload.size:,} bytes is more than the limit of {settings.UPLOAD_MAX_BYTES:,} (UPLOAD_MAX_BYTES)"
    return ""


def _csv_problem(upload: Any) -> str:
    newlines = 0
    max_lines = settings.UPLOAD_MAX_ROWS + 1  # the header
    for chunk in _chunks(upload):
        at = chunk.find(b"\x00")
        if at >= 0:
            line = newlines + chunk.count(b"\n", 0, at) + 1
            return f"line {line}: NUL byte (not a text CSV file)"
        newlines += chunk.count(b"\n")
        if newlines > max_lines:
            return f"more than {settings.UPLOAD_MAX_ROWS:,} rows (UPLOAD_MAX_ROWS)"
    return ""


def _parquet_problem(upload: Any) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    upload.seek(0)
    head = upload.read(4)
    upload.seek(0)
    if head != b"PAR1":
        return "not a Parquet file (no PAR1 magic bytes)"
    source = upload.file if hasattr(upload, "file") else upload
    try:
        metadata = pq.ParquetFile(source).metadata
        if metadata.num_rows > settings.UPLOAD_MAX_ROWS:
            return (
                f"{metadata.num_rows:,} rows is more than the limit of {settings.UPLOAD_MAX_ROWS:,} (UPLOAD_MAX_ROWS)"
            )
        expanded = _expanded_bytes_past(source, metadata=metadata, limit=settings.UPLOAD_MAX_EXPANDED_BYTES)
    except MemoryError:
        raise  # out of memory is no fault of the file
    except (pa.ArrowException, OSError) as exc:
        return f"not a readable Parquet file ({exc})"
    finally:
        upload.seek(0)
    if expanded:
        return (
            f"expands to at least {expanded:,} bytes, more than the limit of "
            f"{settings.UPLOAD_MAX_EXPANDED_BYTES:,} (UPLOAD_MAX_EXPANDED_BYTES)"
        )
    return ""


# The size in memory of a column chunk once read, as pyarrow holds it: a fixed-width value its
# width (bits here, by physical type), a text value its bytes plus a 4-byte offset.
WIDTH_BITS = {"BOOLEAN": 1, "INT32": 32, "INT64": 64, "INT96": 96, "FLOAT": 32, "DOUBLE": 64}
OFFSET = 4
COUNT_ROWS = 1 << 16  # rows decoded at once while counting text
COUNT_BYTES = 64 << 20  # and at most this much text, should a column be read without its dictionary


@dataclass
class _Chunk:
    """One column chunk: ``low`` and ``high`` bound its size in memory (equal when known; no
    ``high`` yet for dictionary-encoded text)."""

    group: int
    path: str
    values: int
    uncompressed: int
    low: int
    high: int | None
    longest: int = 0  # the longest value of its dictionary, once read


def _expanded_bytes_past(source: Any, *, metadata: Any, limit: int) -> int:
    """0 when the file decodes to at most ``limit`` bytes, else a count of more than ``limit``
    bytes that it decodes to at least.

    The footer gives each chunk's uncompressed size, which is what plain pages decode to, but a
    dictionary-encoded text chunk stores each distinct value once and an index per row: 16 KB
    can decode to 20 GB. Such a chunk is bounded from its dictionary (read alone, it is small):
    rows × (longest value + offset), plus its pages for values written plainly after the
    dictionary filled. Only when these bounds exceed the limit are the chunks counted exactly,
    the widest gap first, reading indices against the dictionary (never the decoded text) and
    stopping as soon as the limit is passed.
    """
    import pyarrow.parquet as pq

    chunks = _column_chunks(metadata)
    low = sum(chunk.low for chunk in chunks)
    text = [chunk for chunk in chunks if chunk.high is None]
    if low > limit or not text:
        return low if low > limit else 0
    reader = pq.ParquetFile(source, read_dictionary=sorted({chunk.path for chunk in text}))
    for chunk in text:
        chunk.longest = _longest_in_dictionary(reader, chunk)
        chunk.high = chunk.values * (chunk.longest + OFFSET) + chunk.uncompressed
    high = sum(cast(int, chunk.high) for chunk in chunks)  # every chunk's, now
    for chunk in sorted(text, key=lambda chunk: cast(int, chunk.high) - chunk.low, reverse=True):
        if high <= limit:
            return 0
        counted = 0
        for part in _text_bytes(reader, chunk):
            counted += part
            if low + max(0, counted - chunk.low) > limit:
                return low + max(0, counted - chunk.low)
        low, high = low + counted - chunk.low, high + counted - cast(int, chunk.high)
    return 0 if high <= limit else low


def _column_chunks(metadata: Any) -> list[_Chunk]:
    chunks = []
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            kind, n = column.physical_type, column.num_values
            if kind in WIDTH_BITS:
                size = -(-n * WIDTH_BITS[kind] // 8)
            elif kind == "FIXED_LEN_BYTE_ARRAY":
                size = n * metadata.schema.column(c).length
            elif not column.has_dictionary_page:
                size = column.total_uncompressed_size  # plain pages: each value's length and bytes
            else:
                size = None
            low = n * OFFSET if size is None else size
            chunks.append(_Chunk(g, column.path_in_schema, n, column.total_uncompressed_size, low=low, high=size))
    return chunks


def _longest_in_dictionary(reader: Any, chunk: _Chunk) -> int:
    """The longest value of the chunk's dictionary, from its first row read as a dictionary
    (which brings the whole dictionary page). Should that row bring none (a null first), any
    value still fits in the chunk's uncompressed pages."""
    import pyarrow.compute as pc

    first = next(reader.iter_batches(batch_size=1, row_groups=[chunk.group], columns=[chunk.path]), None)
    dictionary = _dictionary_of(first.column(0)) if first is not None and first.num_rows else None
    if dictionary is None or not len(dictionary):
        return chunk.uncompressed
    return pc.max(pc.binary_length(dictionary)).as_py() or 0


def _dictionary_of(array: Any) -> Any:
    import pyarrow as pa

    while True:
        if isinstance(array, pa.DictionaryArray):
            return array.dictionary if _is_text(array.dictionary.type) else None
        if isinstance(array, pa.StructArray):
            [array] = array.flatten()  # read by one leaf's path: one field on the way down
        elif isinstance(array, (pa.ListArray, pa.LargeListArray, pa.FixedSizeListArray)):
            array = array.flatten()
        else:
            return None


def _text_bytes(reader: Any, chunk: _Chunk):
    """The chunk's size in memory, batch by batch."""
    rows = max(1, min(COUNT_ROWS, COUNT_BYTES // (chunk.longest + OFFSET)))
    for batch in reader.iter_batches(batch_size=rows, row_groups=[chunk.group], columns=[chunk.path]):
        yield _decoded_bytes(batch.column(0))


def _decoded_bytes(array: Any) -> int:
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.DictionaryArray) and _is_text(array.dictionary.type):
        lengths = pc.binary_length(array.dictionary)
        return (pc.sum(pc.take(lengths, array.indices)).as_py() or 0) + OFFSET * len(array)
    if isinstance(array, pa.StructArray):
        return sum(_decoded_bytes(field) for field in array.flatten())
    if isinstance(array, (pa.ListArray, pa.LargeListArray, pa.FixedSizeListArray)):
        return _decoded_bytes(array.flatten())
    if _is_text(array.type):
        return (pc.sum(pc.binary_length(array)).as_py() or 0) + OFFSET * len(array)
    return array.nbytes


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return (
        pa.types.is_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_large_binary(kind)
    )


def _chunks(upload: Any):
    upload.seek(0)
    try:
        while chunk := upload.read(CHUNK):
            yield chunk
    finally:
        upload.seek(0)
