"""Where a data row of a file is, as an editor shows it: the line an error names. It imports
nothing of the package, so that ``errors`` (which names lines) and ``formats`` (which raises
errors) both may import it."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Any


def lines_of(path: Any, rows: list[int], n_rows: int | None) -> list[int | None]:
    """CSV editor lines of 0-based data rows; ``None`` for each row of a Parquet file.

    When the file has exactly one line per record (no blank lines, no line breaks
    inside quoted fields) the line is ``row + 2``; otherwise the records are
    counted with the csv module up to the last wanted row.
    """
    if Path(str(path)).suffix.lower() != ".csv":
        return [None] * len(rows)
    if n_rows is not None and physical_lines(path) == n_rows + 1:
        return [row + 2 for row in rows]
    wanted = {row + 1 for row in rows}
    last = max(wanted)
    found: dict[int, int] = {}
    limit = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            reader = csv.reader(f)
            record, start = 0, 1
            for fields in reader:
                if fields:  # pyarrow skips blank lines, and so does the record count
                    if record in wanted:
                        found[record] = start
                    record += 1
                    if record > last:
                        break
                start = reader.line_num + 1
    except csv.Error:
        pass
    finally:
        csv.field_size_limit(limit)
    return [found.get(row + 1, row + 2) for row in rows]


def physical_lines(path: Any) -> int:
    """Number of lines an editor shows (``\\n``, ``\\r\\n`` and a lone ``\\r`` end a line)."""
    breaks, previous_cr, last = 0, False, b""
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            breaks += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
            if previous_cr and chunk.startswith(b"\n"):
                breaks -= 1
            previous_cr, last = chunk.endswith(b"\r"), chunk[-1:]
    return breaks + (1 if last not in (b"\n", b"\r", b"") else 0)
