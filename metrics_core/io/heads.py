"""The first rows of an input file checked by the readers' own rules, every problem listed.

A reader stops at the first problem of a file it reads whole; :func:`check_head` reads at
most the first ``rows`` rows (of a CSV file at most its first ``max_bytes``) and runs each
column's check of that reader on them, so that one call lists every problem found there:
what a service can check before it accepts a file, in bounded time and memory. Rows after
the head are for the reader itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from .errors import InputError
from .source import TableSource
from .tables import ITEM_COLUMNS

HEAD_ROWS = 1 << 16
HEAD_BYTES = 4 << 20

# The columns each reader takes, and the checks it runs on them (in order). The readers:
# read_items; _read_clustering (base, exp, ground truth); _read_weights_for.
_RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "items": (ITEM_COLUMNS[:3], ("weight",)),
    "clustering": (("item_id", "cluster_id"), ()),
    "weights": (("item_id", "weight"), ()),
}


@dataclass(frozen=True, eq=False)
class Head:
    """A file's first rows, checked: every problem found, and its item ids when they are valid.

    ``complete``: the head is the whole file. ``source``: the rows read (None when the file
    could not be opened, its columns being wrong, say).
    """

    path: str
    problems: tuple[InputError, ...]
    item_ids: pa.Array | None
    complete: bool
    source: TableSource | None


def check_head(path: Any, *, table: str, rows: int = HEAD_ROWS, max_bytes: int = HEAD_BYTES) -> Head:
    """Check the first rows of an ``items``, ``clustering`` or ``weights`` file.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "items.csv").write_text("item_id,base_cluster,exp_cluster,weight\\na,1,1,x\\nb,,1,1\\n")
    >>> [str(p).split(": ", 1)[1] for p in check_head(folder / "items.csv", table="items").problems]
    ['line 3: empty base_cluster', "line 2: weight 'x' is not a number"]
    """
    required, optional = _RULES[table]
    return head_checked(
        path,
        required=required,
        optional=optional,
        keep_others=table == "items",
        checks=_checks_of(table),
        rows=rows,
        max_bytes=max_bytes,
    )


def head_checked(
    path: Any,
    *,
    required: tuple[str, ...],
    checks: Callable[[TableSource], list[Callable[[], Any]]],
    optional: tuple[str, ...] = (),
    keep_others: bool = False,
    rows: int = HEAD_ROWS,
    max_bytes: int = HEAD_BYTES,
) -> Head:
    """The head of any table: ``checks(source)`` gives the checks to run, the first returning
    the item ids; each raises :class:`InputError`, and each is run whatever the others found."""
    try:
        src = TableSource.open(
            path, required=required, optional=optional, keep_others=keep_others, head_rows=rows, head_bytes=max_bytes
        )
    except InputError as exc:
        return Head(str(path), (exc,), None, False, None)
    problems: list[InputError] = []
    results = []
    for check in checks(src):
        try:
            results.append(check())
        except InputError as exc:
            problems.append(exc)
            results.append(None)
    return Head(src.path, tuple(problems), results[0] if results else None, src.complete, src)


def _checks_of(table: str) -> Callable[[TableSource], list[Callable[[], Any]]]:
    """The checks of ``table``'s reader, the item ids first."""

    def checks(src: TableSource) -> list[Callable[[], Any]]:
        found = [lambda: _unique_ids(src)]
        if table == "items":
            found += [lambda: src.labels("base_cluster"), lambda: src.labels("exp_cluster")]
        if table == "clustering":
            found.append(lambda: src.labels("cluster_id"))
        if "weight" in src.names:  # required of a weights file, optional in an items file
            found.append(lambda: src.weights("weight"))
        return found

    return checks


def _unique_ids(src: TableSource) -> pa.Array:
    ids = src.ids("item_id")
    src.require_unique("item_id", ids)
    return ids
