"""The one error type of metrics_core.io: a file, a place in it and a problem."""

from __future__ import annotations

from typing import Any

from .lines import lines_of


class InputError(ValueError):
    """A bad input (or output) file; ``str(err)`` is one line naming file, place and problem.

    Attributes
    ----------
    path : str
        The file name as the user gave it.
    row : int or None
        0-based index of the offending data row (the header is not a data row).
    line : int or None
        For CSV, the 1-based line of that row as an editor shows it.
    problem : str
    """

    def __init__(self, path: Any, problem: str, *, row: int | None = None, line: int | None = None):
        self.path = str(path)
        self.row = row
        self.line = line
        self.problem = _one_line(problem)
        where = place_text(row, line)
        super().__init__(f"{_one_line(self.path)}: {where + ': ' if where else ''}{self.problem}")

    @classmethod
    def at_row(cls, path: Any, row: int, problem: str, *, n_rows: int | None = None) -> InputError:
        """The error for data row ``row`` (0-based) of ``path``, with its CSV line found.

        ``n_rows``, the number of data rows, lets the common case skip a rescan.
        """
        return cls(path, problem, row=row, line=lines_of(path, [row], n_rows)[0])


def _one_line(text: str) -> str:
    return " ".join(str(text).splitlines())


def place_text(row: int | None, line: int | None) -> str:
    if line is not None:
        return f"line {line}"
    return "" if row is None else f"row {row + 1}"
