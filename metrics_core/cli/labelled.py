"""``estimate``'s labelled prefix of each batch of a PAIRS file with ``positions`` (abcde-spec §14)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..estimation.labelled import labelled_draws_by_metric
from ..io import PairsTable
from ..io.positions import PairOrder, read_pair_order
from ..judgements import PairVerdicts
from ..masses import SELF
from ..sampling import PairSample, labelled_draws, labelled_prefix
from ..sampling.order import rows_gather


@dataclass(frozen=True)
class Labelled:
    """Each row of the estimated sample's labelled draws, and the ``labelled`` JSON block."""

    counts: np.ndarray
    block: dict


def labelled_of_file(sample: PairSample, file_rows: PairSample, order: PairOrder, verdicts: PairVerdicts) -> Labelled:
    """The labelled prefix of each batch of a PAIRS file whose rows are ``file_rows`` (file order, repeats
    kept) and which makes ``sample`` (repeats merged, first seen first). A pair is resolved when it has
    a verdict, *unsure* included; the counts returned are per row of ``sample``."""
    verdict_row = verdicts.rows_of(file_rows.i, file_rows.j)
    resolved = (verdict_row >= 0) | (file_rows.pair_class == SELF)
    file_counts = np.zeros(len(file_rows), dtype=np.int64)
    by_batch = []
    batches = np.unique(order.batch).tolist()
    for b in batches:
        rows: slice | np.ndarray
        if len(batches) == 1:
            rows, part, positions = slice(None), file_rows, order.positions
        else:
            rows = np.flatnonzero(order.batch == b)
            part = PairSample(
                file_rows.scheme,
                file_rows.i[rows],
                file_rows.j[rows],
                file_rows.pair_class[rows],
                file_rows.stratum[rows],
                file_rows.draws[rows],
            )
            positions = order.positions[rows_gather(file_rows.draws, rows)]
        # labelled_prefix wants each row's positions in row order: they are, ascending within a row.
        counts, prefix = labelled_prefix(part, positions, resolved[rows])
        file_counts[rows] = counts
        by_batch.append({"batch": int(b), "prefix": prefix, "draws": part.n_draws})
    waiting = _waiting(verdicts, verdict_row, file_counts)
    block = {"draws": int(file_counts.sum()), "waiting_verdicts": waiting, "by_batch": by_batch}
    same_rows = len(sample) == len(file_rows)  # no pair repeated: the sample's rows are the file's
    return Labelled(file_counts if same_rows else labelled_draws([file_rows], [file_counts]), block)


def _waiting(verdicts: PairVerdicts, verdict_row: np.ndarray, file_counts: np.ndarray) -> int:
    """The verdicts waiting: those on a pair of the file (either orientation) with no labelled draw yet,
    in any batch."""
    found = verdict_row >= 0
    in_file = np.bincount(verdict_row[found], minlength=len(verdicts)) > 0
    labelled = np.bincount(verdict_row[found], weights=file_counts[found], minlength=len(verdicts))
    rows = verdicts.equivalent + verdicts.not_equivalent + verdicts.unsure
    return int(rows[in_file & (labelled == 0)].sum())


def labelled_of_pairs(
    pairs: PairsTable, sample: PairSample, i: np.ndarray, j: np.ndarray, verdicts: PairVerdicts
) -> Labelled | None:
    """:func:`labelled_of_file` for a PAIRS file already read and checked (``i``, ``j`` its rows' item
    positions, ``sample`` the sample it makes); ``None`` when it has no ``positions`` (a sample judged
    in no particular order)."""
    order = read_pair_order(pairs.path, pairs.draws)
    if order is None:
        return None
    draws = np.asarray(pairs.draws, dtype=np.int64)
    rows = PairSample(sample.scheme, i, j, pairs.pair_class, pairs.stratum, draws)
    return labelled_of_file(sample, rows, order, verdicts)


def with_labelled(result: dict, sample: PairSample, labelled: Labelled) -> dict:
    """The ``estimate`` JSON with the ``labelled`` block and each estimate's ``labelled_draws`` (the
    model-assisted ones' too)."""
    per_metric = labelled_draws_by_metric(sample, labelled.counts, result["estimates"])
    for name, estimate in result["estimates"].items():
        estimate["labelled_draws"] = per_metric[name]
    for name, estimate in result.get("model_assisted", {}).get("estimates", {}).items():
        estimate["labelled_draws"] = per_metric[name]
    result["labelled"] = labelled.block
    return result
