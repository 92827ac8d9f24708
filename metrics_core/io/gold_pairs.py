"""The GOLD file of ``estimate --raters dawid-skene``: gold questions and their known answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .source import TableSource
from .tables import unquote_spreadsheet_text

GOLD_ANSWERS = ("equivalent", "not_equivalent")


@dataclass(frozen=True, eq=False)
class GoldPairsTable:
    """Gold pairs of item ids; ``answer`` holds the answers' names."""

    path: str
    i: pa.Array
    j: pa.Array
    answer: np.ndarray

    def __len__(self) -> int:
        return len(self.i)


def read_gold_pairs(path: Any) -> GoldPairsTable:
    """Read ``i, j, answer`` (``equivalent`` or ``not_equivalent``); a header alone means no gold.

    Raises :class:`~metrics_core.io.InputError` naming the file, the row and the problem.
    """
    src = TableSource.open(path, required=("i", "j", "answer"), allow_no_rows=True)
    ids = {name: src.ids(name) for name in ("i", "j")}
    if src.kind == "csv":
        ids = {name: unquote_spreadsheet_text(values) for name, values in ids.items()}
    codes = src.choices("answer", GOLD_ANSWERS)
    return GoldPairsTable(src.path, ids["i"], ids["j"], np.asarray(GOLD_ANSWERS, dtype=object)[codes])
