"""Draw order on the command line (abcde-spec §14): ``sample``'s ``batch`` and ``positions``
(``estimate``'s labelled prefix of each batch is in :mod:`.labelled`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ..io.positions import positions_text
from ..sampling import batch_order_rng
from ..sampling.order import positions_for_draws, rows_by_first_position


def in_draw_order(columns: dict[str, Any], *, seed: int, batch: int) -> dict[str, Any]:
    """A PAIRS table's columns with ``batch`` and ``positions`` added, rows sorted by first position."""
    draws = np.asarray(columns["draws"], dtype=np.int64)
    positions = positions_for_draws(draws, rng=batch_order_rng(seed=seed, batch=batch))
    order, positions = rows_by_first_position(draws, positions)
    taken = pa.array(order)
    out = {
        name: values.take(taken) if isinstance(values, (pa.Array, pa.ChunkedArray)) else np.asarray(values)[order]
        for name, values in columns.items()
    }
    out["batch"] = np.full(len(order), batch, dtype=np.int64)
    out["positions"] = positions_text(positions, draws[order])
    return out
