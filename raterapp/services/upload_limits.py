"""Limits on uploads, checked while the request is handled, before anything is stored.

The request already holds each file (Django streams large ones to a temporary file), so
these checks cost one pass in 1 MiB chunks and never parse the whole file: the byte size,
for CSV the line count and NUL bytes (text files never hold them; random or binary data
almost always does), for Parquet the magic bytes and the footer's row count and
size in memory (a small file that would expand to gigabytes). Field lengths, NUL bytes
inside Parquet text and everything else about the content are checked by the preparation
(metrics_core readers, raterapp.services.catalogue), which fails the experiment with the
file, row and problem.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

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
    try:
        metadata = pq.ParquetFile(upload.file if hasattr(upload, "file") else upload).metadata
    except (pa.ArrowInvalid, OSError) as exc:
        return f"not a readable Parquet file ({exc})"
    finally:
        upload.seek(0)
    if metadata.num_rows > settings.UPLOAD_MAX_ROWS:
        return f"{metadata.num_rows:,} rows is more than the limit of {settings.UPLOAD_MAX_ROWS:,} (UPLOAD_MAX_ROWS)"
    expanded = _expanded_bytes(metadata)
    if expanded > settings.UPLOAD_MAX_EXPANDED_BYTES:
        return (
            f"expands to {expanded:,} bytes, more than the limit of "
            f"{settings.UPLOAD_MAX_EXPANDED_BYTES:,} (UPLOAD_MAX_EXPANDED_BYTES)"
        )
    return ""


def _expanded_bytes(metadata) -> int:
    """A lower bound of the file's size in memory: its uncompressed pages, plus 8 bytes per cell
    (a number, or the offset of a text value) that dictionary and run-length encoding hide."""
    pages = sum(metadata.row_group(g).total_byte_size for g in range(metadata.num_row_groups))
    return pages + 8 * metadata.num_rows * metadata.num_columns


def _chunks(upload: Any):
    upload.seek(0)
    try:
        while chunk := upload.read(CHUNK):
            yield chunk
    finally:
        upload.seek(0)
