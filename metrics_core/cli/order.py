"""Draw order on the command line (abcde-spec §14): ``sample``'s ``batch`` and ``positions``,
and ``estimate``'s labelled prefix of each batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .._sorting import unordered_pair_keys
from ..estimation.labelled import labelled_draws_by_metric
from ..io import PairsTable
from ..io.positions import PairOrder, positions_text, read_pair_order
from ..masses import SELF
from ..sampling import PairSample, batch_order_rng, labelled_draws, labelled_prefix
from ..sampling.order import positions_for_draws, rows_by_first_position, rows_gather


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


@dataclass(frozen=True)
class Labelled:
    """Each row of the estimated sample's labelled draws, and the ``labelled`` JSON block."""

    counts: np.ndarray
    block: dict


def labelled_of_file(sample_rows: PairSample, order: PairOrder, judged_i: np.ndarray, judged_j: np.ndarray) -> Labelled:
    """The labelled prefix of each batch of a PAIRS file whose rows are ``sample_rows`` (file order,
    repeats kept). A pair is resolved when JUDGEMENTS has a row on it, *unsure* included; the counts
    returned are per row of the sample the file makes (repeats merged, first seen first)."""
    n = int(max(sample_rows.i.max(initial=0), sample_rows.j.max(initial=0), judged_i.max(initial=0),
                judged_j.max(initial=0))) + 1  # fmt: skip
    key = unordered_pair_keys(sample_rows.i, sample_rows.j, n)
    judged = judged_i != judged_j
    judged_key = unordered_pair_keys(judged_i[judged], judged_j[judged], n)
    resolved = np.isin(key, judged_key) | (sample_rows.pair_class == SELF)
    file_counts = np.zeros(len(sample_rows), dtype=np.int64)
    by_batch = []
    for b in np.unique(order.batch).tolist():
        rows = np.flatnonzero(order.batch == b)
        part = PairSample(
            sample_rows.scheme,
            sample_rows.i[rows],
            sample_rows.j[rows],
            sample_rows.pair_class[rows],
            sample_rows.stratum[rows],
            sample_rows.draws[rows],
        )
        positions = order.positions[rows_gather(sample_rows.draws, rows)]
        # labelled_prefix wants each row's positions in row order: they are, ascending within a row.
        counts, prefix = labelled_prefix(part, positions, resolved[rows])
        file_counts[rows] = counts
        by_batch.append({"batch": int(b), "prefix": prefix, "draws": part.n_draws})
    # A verdict waits when its pair has no labelled draw yet (in any batch, either orientation).
    pairs, pair_of_row = np.unique(key, return_inverse=True)
    pair_labelled = np.bincount(pair_of_row, weights=file_counts, minlength=len(pairs))
    at = np.searchsorted(pairs, judged_key)
    found = at < len(pairs)
    found[found] = pairs[at[found]] == judged_key[found]
    waiting = int(np.count_nonzero(pair_labelled[at[found]] == 0))
    counts = labelled_draws([sample_rows], [file_counts])
    block = {"draws": int(file_counts.sum()), "waiting_verdicts": waiting, "by_batch": by_batch}
    return Labelled(counts, block)


def labelled_of_pairs(
    pairs: PairsTable, scheme: str, i: np.ndarray, j: np.ndarray, judged_i, judged_j
) -> Labelled | None:
    """:func:`labelled_of_file` for a PAIRS file already read and checked (``i``, ``j`` its rows' item
    positions); ``None`` when it has no ``positions`` (a sample judged in no particular order)."""
    order = read_pair_order(pairs.path, pairs.draws)
    if order is None:
        return None
    rows = PairSample(scheme, i, j, pairs.pair_class, pairs.stratum, np.asarray(pairs.draws, dtype=np.int64))
    return labelled_of_file(rows, order, judged_i, judged_j)


def with_labelled(result: dict, sample: PairSample, labelled: Labelled) -> dict:
    """The ``estimate`` JSON with the ``labelled`` block and each estimate's ``labelled_draws``."""
    per_metric = labelled_draws_by_metric(sample, labelled.counts, result["estimates"])
    for name, estimate in result["estimates"].items():
        estimate["labelled_draws"] = per_metric[name]
    result["labelled"] = labelled.block
    return result
