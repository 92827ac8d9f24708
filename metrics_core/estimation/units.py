"""Sample rows sorted into units (distinct unordered pairs) per (stratum, class), and their verdicts.

At a million judged pairs every row- or unit-sized temporary costs page faults as well as a pass
(numpy asks huge pages for large arrays), so the keys are built in place, the sorted keys come
out of the sort itself, and the verdicts are joined as (unit, verdict) index pairs instead of a
(3, units) table of counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._sorting import stable_argsort_codes
from ..judgements import PairVerdicts
from ..masses import SELF
from ..sampling import PairSample


@dataclass(frozen=True)
class Units:
    """Sample rows sorted by ``(stratum, class, unordered pair)`` and their units (distinct pairs)."""

    order: np.ndarray  # sorted position -> row (of the rows in scope)
    starts: np.ndarray  # first sorted row of each unit
    row_bounds: np.ndarray  # (13,): the rows of each (stratum, class)
    unit_bounds: np.ndarray  # (13,): the units of each (stratum, class)
    n: int
    # The units of two rows (a pair drawn both ways) and their second row; ``None`` when a unit
    # has more (a sample with repeated rows).
    second_rows: tuple[np.ndarray, np.ndarray] | None
    judged: tuple[np.ndarray, np.ndarray]  # the units with a verdict, and its row in the verdicts

    @classmethod
    def build(cls, sample: PairSample, rows: np.ndarray | None, verdicts: PairVerdicts) -> Units:
        pick = (lambda values: values) if rows is None else (lambda values: values[rows])  # noqa: E731
        i, j = pick(sample.i), pick(sample.j)
        n = int(max(i.max(initial=0), j.max(initial=0), verdicts.b.max(initial=0))) + 1
        # A pair and its reverse are of one class: with the class in the key, the units of each
        # (stratum, class) are a contiguous range of codes.
        group = pick(sample.stratum).astype(np.int8)
        group *= 4
        group += pick(sample.pair_class)
        key = np.multiply(group, n, dtype=np.int64)
        end = np.minimum(i, j)
        key += end
        key *= n
        key += np.maximum(i, j, out=end)
        del end
        order, key, tie = _stable_order(key, group, i, j, n)
        first = np.ones(len(key), dtype=bool)
        if tie is None:
            np.not_equal(key[1:], key[:-1], out=first[1:])
            second_rows = None
        else:  # a unit's rows are one row, or two: a tie and the row after it
            first[tie + 1] = False
            second_rows = (tie - np.arange(len(tie)), tie + 1)
        starts = np.flatnonzero(first)
        del first
        row_bounds = np.searchsorted(key, np.arange(13) * (n * n))
        unit_bounds = np.searchsorted(starts, row_bounds)
        # Joined now, while the row-sized arrays of the draws do not exist yet (a lower peak).
        judged = judged_units(verdicts, key, starts, unit_bounds, n)
        return cls(order, starts, row_bounds, unit_bounds, n, second_rows, judged)


def _self_units(unit_bounds: np.ndarray) -> np.ndarray:
    """Whether each unit is a self pair."""
    is_self = np.zeros(int(unit_bounds[-1]), dtype=bool)
    for lo, hi in self_ranges(unit_bounds):
        is_self[lo:hi] = True
    return is_self


def self_ranges(unit_bounds: np.ndarray) -> list[tuple[int, int]]:
    """The unit ranges of the self pairs, one per stratum (from the unit bounds of each (stratum, class))."""
    return [(int(unit_bounds[4 * stratum + SELF]), int(unit_bounds[4 * stratum + SELF + 1])) for stratum in range(3)]


def _stable_order(
    key: np.ndarray, group: np.ndarray, i: np.ndarray, j: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``np.argsort(key, kind="stable")``, the sorted keys, and the sorted rows equal to the next
    (``None`` when three rows are equal), several times as fast on a sample in ``(stratum, i, j)``
    order (as drawn): there the rows ``i < j`` of each (stratum, class) ascend by key already and
    the rows ``i > j`` once ordered by ``j`` (sorts of small codes), leaving runs for numpy's
    timsort to merge."""
    reverse = i > j
    forward, backward = np.flatnonzero(~reverse), np.flatnonzero(reverse)
    del reverse
    forward = forward[stable_argsort_codes(group[forward], 12)]
    code = np.multiply(group[backward], n, dtype=np.int64)
    code += j[backward]
    backward = backward[stable_argsort_codes(code, 12 * n)]
    del code
    laid_out = np.concatenate((forward, backward))
    del forward, backward
    runs = key[laid_out]
    by_key = np.argsort(runs, kind="stable")
    order = laid_out[by_key]
    del laid_out
    runs = runs[by_key]
    del by_key
    # The rows of a unit (equal keys) now stand forward row first; a stable sort keeps sample order.
    tie = np.flatnonzero(runs[1:] == runs[:-1])
    if (np.diff(tie) == 1).any():  # three rows of one pair: a sample with repeated rows
        order = np.argsort(key, kind="stable")
        return order, key[order], None
    swap = tie[order[tie] > order[tie + 1]]
    order[swap], order[swap + 1] = order[swap + 1], order[swap]
    return order, runs, tie


def judged_units(
    verdicts: PairVerdicts, key: np.ndarray, starts: np.ndarray, unit_bounds: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The units (of the sorted rows' ``key`` and the units' ``starts``) with a verdict, and
    their verdict's row in ``verdicts``, self pairs excluded."""
    m = len(verdicts.a)
    if m == 0 or len(starts) == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    # A self pair's key equals a verdict's only where a verdict is on a self pair (a == b).
    self_verdicts = bool((verdicts.a == verdicts.b).any())
    ranges = _unit_ranges(unit_bounds, with_self=self_verdicts)
    # Both key lists are ascending runs (the units' one per (stratum, class)), which a stable sort
    # merges in about half the time of a binary search per unit: a judged unit's key lands right
    # after its verdict's equal key.
    keys = np.empty(m + sum(hi - lo for _, lo, hi in ranges), dtype=np.int64)
    np.multiply(verdicts.a, n, out=keys[:m])
    keys[:m] += verdicts.b
    at = m
    for g, lo, hi in ranges:  # low·n + high
        pair_key = keys[at : at + hi - lo]
        np.take(key, starts[lo:hi], out=pair_key, mode="clip")  # valid: "clip" spares a buffer
        pair_key -= g * (n * n)
        at += hi - lo
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    tied = keys[1:] == keys[:-1]
    del keys
    first = np.flatnonzero(tied)
    del tied
    index, position = order[first], order[first + 1]
    del order, first
    found = (index < m) & (position >= m)
    if not found.all():
        index, position = index[found], position[found]
    unit = _unit_of_position(position - m, ranges)
    if self_verdicts:
        judged = ~_self_units(unit_bounds)[unit]
        index, unit = index[judged], unit[judged]
    return unit, index


def _unit_ranges(unit_bounds: np.ndarray, with_self: bool) -> list[tuple[int, int, int]]:
    """The non-empty unit ranges ``(group, lo, hi)`` of each (stratum, class), self pairs only ``with_self``."""
    return [
        (g, int(unit_bounds[g]), int(unit_bounds[g + 1]))
        for g in range(12)
        if unit_bounds[g] < unit_bounds[g + 1] and (with_self or g % 4 != SELF)
    ]


def _unit_of_position(position: np.ndarray, ranges: list[tuple[int, int, int]]) -> np.ndarray:
    """The unit of each position in the ranges laid end to end."""
    # intp even when ``ranges`` is empty (a slice whose only units are self pairs): numpy would
    # make an empty list float64 and refuse to add it to the integer positions.
    first = np.cumsum([0] + [hi - lo for _, lo, hi in ranges], dtype=np.intp)[:-1]
    shift = np.array([lo for _, lo, _ in ranges], dtype=np.intp) - first
    if len(shift) and (shift == shift[0]).all():  # contiguous ranges (one scheme's non-self classes)
        position += shift[0]
        return position
    position += shift[np.searchsorted(first, position, side="right") - 1]
    return position
