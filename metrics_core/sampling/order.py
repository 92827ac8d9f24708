"""Judging in draw order (abcde-spec §14): each draw's position, the task order, the labelled prefix.

Each batch has a seeded random permutation of its draws (:func:`~.batches.batch_order_rng`).
A pair's task rank is the position of its first draw, so that the judged pairs are, nearly, a
prefix of the permutation; the estimates use the **labelled prefix**: the draws before the
first draw whose pair is not resolved yet, an exact simple random sample of the batch's draws.

Positions are laid out row by row: row ``r`` of a sample owns ``positions[offsets[r]:offsets[r + 1]]``
with ``offsets = [0, cumsum(sample.draws)]``, ascending within the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._sorting import unordered_pair_keys
from .._validation import generator
from ..masses import SELF
from .core import PairSample, distinct_rows


def draw_positions(sample: PairSample, *, rng: np.random.Generator) -> np.ndarray:
    """Each draw's position in a uniformly random permutation of the sample's draws.

    The draws are expanded in row order (row ``r`` has ``sample.draws[r]`` of them) and
    shuffled by ``rng``: pass the batch's order stream, ``batch_order_rng(seed=, batch=)``.
    Row ``r``'s positions are ``positions[offsets[r]:offsets[r + 1]]`` (``offsets`` the
    cumulative draws), ascending. O(S) time and memory.

    Returns
    -------
    ndarray of int64, length ``sample.n_draws``: a permutation of ``0 .. n_draws − 1``.

    Examples
    --------
    >>> from metrics_core import population_from_labels, sample_pairs
    >>> from metrics_core.sampling import batch_order_rng, batch_rng
    >>> pop = population_from_labels([0, 0, 0, 1], [0, 0, 1, 1])
    >>> sample = sample_pairs(pop, n_draws=20, rng=batch_rng(seed=3, batch=0))
    >>> positions = draw_positions(sample, rng=batch_order_rng(seed=3, batch=0))
    >>> sorted(positions.tolist()) == list(range(20))
    True
    >>> bool((positions == draw_positions(sample, rng=batch_order_rng(seed=3, batch=0))).all())
    True
    """
    return positions_for_draws(sample.draws, rng=rng)


def positions_for_draws(draws: Any, *, rng: np.random.Generator) -> np.ndarray:
    """:func:`draw_positions` of rows with these draw counts (a table's ``draws`` column)."""
    rng = generator("rng", rng)
    draws = np.asarray(draws, dtype=np.int64)
    n_draws = int(draws.sum())
    positions = rng.permutation(n_draws).astype(np.int64, copy=False)
    if n_draws:
        # Sort within each row: rows are contiguous slices, so sort by (row, position) at once.
        row = np.repeat(np.arange(len(draws), dtype=np.int64), draws)
        positions = positions[np.lexsort((positions, row))]
    return positions


def pairs_in_draw_order(sample: PairSample, positions: Any) -> tuple[np.ndarray, np.ndarray]:
    """The distinct unordered non-self pairs of a sample, by their first draw's position.

    A verdict on ``{i, j}`` serves both ``(i, j)`` and ``(j, i)``: a pair's rank is the
    least position over the rows of both orientations. Self pairs need no verdict.

    Returns
    -------
    a, b : ndarray of int64
        Item positions with ``a < b``, first drawn first.

    Examples
    --------
    >>> from metrics_core.sampling import PairSample
    >>> s = PairSample("jaccard", np.array([0, 1, 0, 2]), np.array([1, 0, 0, 0]),
    ...                np.array([1, 1, 0, 2], dtype=np.int8), np.zeros(4, dtype=np.int8), np.array([1, 2, 1, 1]))
    >>> a, b = pairs_in_draw_order(s, np.array([4, 0, 3, 1, 2]))
    >>> a.tolist(), b.tolist()
    ([0, 0], [1, 2])
    """
    first = first_positions(sample, positions)
    keep = (sample.pair_class != SELF) & (sample.draws > 0)
    low = np.minimum(sample.i, sample.j)[keep].astype(np.int64)
    high = np.maximum(sample.i, sample.j)[keep].astype(np.int64)
    first = first[keep]
    if not len(first):
        return low, high
    order = np.lexsort((first, high, low))  # by pair, then first position
    low, high, first = low[order], high[order], first[order]
    new = np.ones(len(low), dtype=bool)
    new[1:] = (low[1:] != low[:-1]) | (high[1:] != high[:-1])
    low, high, first = low[new], high[new], first[new]
    by_position = np.argsort(first, kind="stable")
    return low[by_position].copy(), high[by_position].copy()


def labelled_prefix(sample: PairSample, positions: Any, resolved_rows: Any) -> tuple[np.ndarray, int]:
    """Each row's draws in the batch's labelled prefix, and the prefix's length (abcde-spec §14).

    ``resolved_rows``: one bool per row, whether its pair is resolved (has a verdict of any kind,
    *unsure* included, or was closed without one); self rows count as resolved whatever it says.
    The prefix ``L`` is the least position among unresolved rows (``n_draws`` when none is);
    ``counts[r]`` is the number of row ``r``'s positions below ``L``. Pass ``counts`` as
    ``labelled_draws=`` to :func:`~metrics_core.estimate_quality`.

    Examples
    --------
    >>> from metrics_core.sampling import PairSample
    >>> s = PairSample("jaccard", np.array([0, 1, 0]), np.array([1, 2, 0]),
    ...                np.array([1, 2, 0], dtype=np.int8), np.zeros(3, dtype=np.int8), np.array([2, 1, 2]))
    >>> counts, prefix = labelled_prefix(s, np.array([0, 3, 2, 1, 4]), [True, False, False])
    >>> counts.tolist(), prefix
    ([1, 0, 1], 2)
    >>> labelled_prefix(s, np.array([0, 3, 2, 1, 4]), [True, True, False])[0].tolist()
    [2, 1, 2]
    """
    positions = _row_positions(sample, positions)
    resolved = np.asarray(resolved_rows, dtype=bool)
    if resolved.shape != (len(sample),):
        raise ValueError(f"resolved_rows must be {len(sample)} bools, one per sample row")
    resolved = resolved | (sample.pair_class == SELF)
    row = np.repeat(np.arange(len(sample), dtype=np.int64), sample.draws)
    waiting = positions[~resolved[row]]
    prefix = int(waiting.min()) if len(waiting) else len(positions)
    counts = np.bincount(row[positions < prefix], minlength=len(sample)).astype(np.int64)
    return counts, prefix


def labelled_draws(samples: Sequence[PairSample], counts: Sequence[Any]) -> np.ndarray:
    """Per-batch labelled draws mapped onto the rows of ``concatenate_samples(samples)``.

    ``counts[k]`` holds one count per row of ``samples[k]`` (:func:`labelled_prefix`); a pair
    drawn in several batches gets the sum of its counts, in the concatenated sample's row order.

    Examples
    --------
    >>> from metrics_core import population_from_labels, sample_pairs
    >>> from metrics_core.sampling import batch_rng, concatenate_samples
    >>> pop = population_from_labels([0, 0, 0], [0, 0, 1])
    >>> batches = [sample_pairs(pop, n_draws=30, rng=batch_rng(seed=1, batch=b)) for b in range(2)]
    >>> every = labelled_draws(batches, [b.draws for b in batches])
    >>> bool((every == concatenate_samples(batches).draws).all())
    True
    """
    samples, counts = list(samples), [np.asarray(c) for c in counts]
    if not samples or len(samples) != len(counts):
        raise ValueError("labelled_draws needs one counts array per sample, and at least one sample")
    for k, (sample, count) in enumerate(zip(samples, counts, strict=True)):
        if count.shape != (len(sample),) or not (count.dtype.kind in "iu" or len(count) == 0):
            raise ValueError(f"counts[{k}] must be {len(sample)} integers, one per row of samples[{k}]")
        if ((count < 0) | (count > sample.draws)).any():
            raise ValueError(f"counts[{k}] must lie within 0 .. the row's draws")
    column = lambda name: np.concatenate([getattr(s, name) for s in samples])  # noqa: E731
    i, j = column("i"), column("j")
    n = int(max(i.max(initial=0), j.max(initial=0))) + 1
    summed = distinct_rows(
        samples[0].scheme,
        n,
        i,
        j,
        column("pair_class"),
        column("stratum"),
        np.concatenate(counts).astype(np.int64),
        None,
        first_seen=True,
    )
    return summed.draws


def first_positions(sample: PairSample, positions: Any) -> np.ndarray:
    """Each row's least position (``n_draws`` for a row without draws)."""
    return first_of_rows(sample.draws, _row_positions(sample, positions))


def first_of_rows(draws: Any, positions: np.ndarray) -> np.ndarray:
    """Each row's least position, for rows with these draw counts (``len(positions)`` without draws)."""
    draws = np.asarray(draws, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(draws)[:-1])).astype(np.int64)
    first = np.full(len(draws), len(positions), dtype=np.int64)
    has = draws > 0
    first[has] = positions[starts[has]]
    return first


def rows_by_first_position(draws: Any, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows' order by first position (the order of a PAIRS file), and the positions laid out in it.

    Examples
    --------
    >>> order, laid_out = rows_by_first_position(np.array([2, 1]), np.array([1, 2, 0]))
    >>> order.tolist(), laid_out.tolist()
    ([1, 0], [0, 1, 2])
    """
    draws = np.asarray(draws, dtype=np.int64)
    order = np.argsort(first_of_rows(draws, positions), kind="stable")
    return order, positions[rows_gather(draws, order)]


def rows_gather(draws: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Indices of the draws of ``rows`` (in that order) in a layout of every row's draws in row order."""
    starts = np.concatenate(([0], np.cumsum(draws)[:-1])).astype(np.int64)
    taken = draws[rows]
    new_starts = np.concatenate(([0], np.cumsum(taken)[:-1])).astype(np.int64)
    return np.repeat(starts[rows] - new_starts, taken) + np.arange(int(taken.sum()), dtype=np.int64)


def _row_positions(sample: PairSample, positions: Any) -> np.ndarray:
    positions = np.asarray(positions)
    if positions.shape != (sample.n_draws,) or not (positions.dtype.kind in "iu" or len(positions) == 0):
        raise ValueError(f"positions must be {sample.n_draws} integers, one per draw of the sample")
    return positions.astype(np.int64, copy=False)


def labelled_of_batches(
    sample: PairSample, batch_positions: Sequence[dict], resolved_rows: Any
) -> tuple[np.ndarray, list[dict]]:
    """Each row's labelled draws over every batch, and each batch's prefix, from stored positions.

    ``batch_positions[r]`` maps each batch that drew row ``r`` to the row's ascending positions in
    that batch (as many as its draws there; together ``sample.draws[r]``). Each batch's prefix is
    :func:`labelled_prefix` of its own rows; a row's counts add up over batches. Returns the counts
    (pass as ``labelled_draws=``) and ``[{"batch": b, "prefix": L_b, "draws": S_b}, ...]``.

    Examples
    --------
    >>> from metrics_core.sampling import PairSample
    >>> s = PairSample("jaccard", np.array([0, 0]), np.array([0, 1]),
    ...                np.array([0, 1], dtype=np.int8), np.zeros(2, dtype=np.int8), np.array([2, 2]))
    >>> counts, batches = labelled_of_batches(s, [{0: [1], 1: [0]}, {0: [0], 1: [1]}], [True, False])
    >>> counts.tolist(), [(b["batch"], b["prefix"]) for b in batches]
    ([1, 0], [(0, 0), (1, 1)])
    """
    resolved = np.asarray(resolved_rows, dtype=bool)
    if resolved.shape != (len(sample),) or len(batch_positions) != len(sample):
        raise ValueError(f"batch_positions and resolved_rows must have {len(sample)} entries, one per sample row")
    counts = np.zeros(len(sample), dtype=np.int64)
    by_batch = []
    for b in sorted({int(k) for entry in batch_positions for k in entry}):
        entries = [(r, entry) for r, entry in enumerate(batch_positions) if b in entry or str(b) in entry]
        lists = [entry[b] if b in entry else entry[str(b)] for _, entry in entries]
        rows = np.array([r for r, _ in entries], dtype=np.int64)
        draws = np.array([len(p) for p in lists], dtype=np.int64)
        part = PairSample(
            sample.scheme, sample.i[rows], sample.j[rows], sample.pair_class[rows], sample.stratum[rows], draws
        )
        flat = np.array([p for row in lists for p in row], dtype=np.int64)
        part_counts, prefix = labelled_prefix(part, flat, resolved[rows])
        counts[rows] += part_counts
        by_batch.append({"batch": b, "prefix": prefix, "draws": int(draws.sum())})
    if (counts > sample.draws).any():
        raise ValueError("batch_positions hold more positions than a row's draws")
    return counts, by_batch


def waiting_verdicts(sample: PairSample, labelled: Any, judged_i: Any, judged_j: Any) -> int:
    """The verdicts (one per ``judged_i[k], judged_j[k]``) on sampled pairs without a labelled draw yet:
    they wait for the prefix to reach them (abcde-spec §14). Either orientation of a pair counts.

    Examples
    --------
    >>> from metrics_core.sampling import PairSample
    >>> s = PairSample("jaccard", np.array([0, 1]), np.array([1, 2]),
    ...                np.array([1, 2], dtype=np.int8), np.zeros(2, dtype=np.int8), np.array([1, 1]))
    >>> waiting_verdicts(s, [1, 0], [1, 2, 2, 0], [0, 1, 1, 2])
    2
    """
    judged_i, judged_j = np.asarray(judged_i, dtype=np.int64), np.asarray(judged_j, dtype=np.int64)
    n = int(max(sample.i.max(initial=0), sample.j.max(initial=0), judged_i.max(initial=0), judged_j.max(initial=0))) + 1
    key = unordered_pair_keys(sample.i, sample.j, n)
    pairs, pair_of_row = np.unique(key, return_inverse=True)
    pair_labelled = np.bincount(pair_of_row, weights=np.asarray(labelled, dtype=np.float64), minlength=len(pairs))
    judged_key = unordered_pair_keys(judged_i, judged_j, n)
    at = np.minimum(np.searchsorted(pairs, judged_key), max(len(pairs) - 1, 0))
    found = (len(pairs) > 0) & (pairs[at] == judged_key) if len(pairs) else np.zeros(len(judged_key), dtype=bool)
    return int(np.count_nonzero(found & (pair_labelled[at] == 0) & (judged_i != judged_j)))
