"""Sampled pairs: the schemes, classes and strata, and :class:`PairSample` checked against its population."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_1d, one_of
from ..masses import INTERSECTION, MERGE, SELF, SPLIT
from ..population import Population

SCHEMES: tuple[str, ...] = ("jaccard", "stratified", "precision")


PAIR_CLASSES: tuple[str, ...] = ("self", "split", "merge", "intersection")


STRATA: tuple[str, ...] = ("all", "diff", "stable")

ALL, DIFF, STABLE = range(3)


# The classes each stratum of each scheme draws from.
SCHEME_STRATA: dict[str, dict[int, tuple[int, ...]]] = {
    "jaccard": {ALL: (SELF, SPLIT, MERGE, INTERSECTION)},
    "stratified": {DIFF: (SPLIT, MERGE), STABLE: (SELF, INTERSECTION)},
    "precision": {ALL: (SELF, SPLIT, MERGE, INTERSECTION)},
}


class SampleError(ValueError):
    """A sample that does not fit its population; ``row`` is the 0-based offending row."""

    def __init__(self, row: int, problem: str):
        super().__init__(f"row {row}: {problem}")
        self.row = row
        self.problem = problem


@dataclass(frozen=True, eq=False)
class PairSample:
    """Distinct sampled pairs ``(i, j)`` (item positions) with their draw counts.

    ``pair_class`` indexes :data:`PAIR_CLASSES`, ``stratum`` indexes :data:`STRATA`.
    """

    scheme: str
    i: np.ndarray
    j: np.ndarray
    pair_class: np.ndarray
    stratum: np.ndarray
    draws: np.ndarray
    diff_share: float | None = None

    @property
    def n_draws(self) -> int:
        return int(self.draws.sum())

    def __len__(self) -> int:
        return len(self.i)

    @classmethod
    def from_columns(
        cls,
        population: Population,
        *,
        scheme: str,
        i: ArrayLike,
        j: ArrayLike,
        draws: ArrayLike,
        pair_class: ArrayLike | None = None,
        stratum: ArrayLike | None = None,
        diff_share: float | None = None,
        repeated: bool = False,
    ) -> PairSample:
        """Rebuild a sample from stored columns, checking it against the population.

        ``pair_class`` and ``stratum`` may be codes or names; when omitted they are
        derived from the population. Raises :class:`SampleError` naming the first
        row that does not belong to the scheme's pair population. A repeated ``(i, j)``
        is an error unless ``repeated`` is true (concatenated batches, abcde-spec §10):
        then its draws add up, in the row order of :func:`concatenate_samples`.
        """
        one_of("scheme", scheme, SCHEMES)
        i, j, draws = (as_1d(name, v).astype(np.int64) for name, v in (("i", i), ("j", j), ("draws", draws)))
        n = population.n_items
        for name, positions in (("i", i), ("j", j)):
            first_bad_row(positions, (positions < 0) | (positions >= n), f"{name} is not an item of the population")
        first_bad_row(draws, draws < 1, "draws must be at least 1")
        actual = pair_classes_of(population, i, j)
        first_bad_row(actual, actual < 0, "j is not in Base(i) ∪ Exp(i) of an affected item i")
        if pair_class is not None:
            given = named_codes("pair_class", pair_class, PAIR_CLASSES)
            first_bad_row(given, given != actual, "pair_class does not match the clusterings")
        expected_stratum = stratum_of(scheme, actual)
        if stratum is not None:
            given = named_codes("stratum", stratum, STRATA)
            first_bad_row(given, given != expected_stratum, f"stratum does not match scheme {scheme}")
        keys = (expected_stratum.astype(np.int64) * n + i) * n + j
        ordered = np.sort(keys)  # a plain sort finds a repeat 20x faster than np.unique's stable one
        if (ordered[1:] == ordered[:-1]).any():
            if not repeated:
                _, first = np.unique(keys, return_index=True)
                duplicated = np.setdiff1d(np.arange(len(keys)), first)
                raise SampleError(int(duplicated.min()), "duplicate pair (i, j)")
            return distinct_rows(scheme, n, i, j, actual, expected_stratum, draws, diff_share, first_seen=True)
        return cls(scheme, i, j, actual, expected_stratum, draws, diff_share)


def distinct_rows(
    scheme: str,
    n_items: int,
    i: np.ndarray,
    j: np.ndarray,
    pair_class: np.ndarray,
    stratum: np.ndarray,
    draws: np.ndarray | None,
    diff_share: float | None,
    *,
    first_seen: bool,
) -> PairSample:
    """The distinct ``(stratum, i, j)`` rows with their draws summed (``None``: one draw a row),
    in first-seen order or sorted by ``(stratum, i, j)``."""
    keys = (stratum.astype(np.int64) * n_items + i) * n_items + j
    _, rows, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if first_seen:
        order = np.argsort(rows, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        rows, inverse = rows[order], rank[inverse]
    summed = np.bincount(inverse, weights=draws, minlength=len(rows)).astype(np.int64)
    return PairSample(scheme, i[rows], j[rows], pair_class[rows], stratum[rows], summed, diff_share)


def pair_classes_of(population: Population, i: Any, j: Any) -> np.ndarray:
    """Class code (index into :data:`PAIR_CLASSES`) of each pair; -1 outside the population.

    A pair is in the population when ``i`` is affected and ``j`` is in Base(i) ∪ Exp(i).
    """
    pop = population
    i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
    same_base = pop.base[i] == pop.base[j]
    same_exp = pop.exp[i] == pop.exp[j]
    classes = np.select(
        [i == j, same_base & same_exp, same_base, same_exp],
        [SELF, INTERSECTION, SPLIT, MERGE],
        default=-1,
    ).astype(np.int8)
    classes[~pop.cell_affected()[pop.cell[i]]] = -1
    return classes


def stratum_of(scheme: str, pair_class: np.ndarray) -> np.ndarray:
    if scheme != "stratified":
        return np.full(len(pair_class), ALL, dtype=np.int8)
    diff = (pair_class == SPLIT) | (pair_class == MERGE)
    return np.where(diff, DIFF, STABLE).astype(np.int8)


def named_codes(name: str, values: Any, names: tuple[str, ...]) -> np.ndarray:
    array = as_1d(name, values)
    if array.dtype.kind in "iu":
        codes = array.astype(np.int8)
        first_bad_row(codes, (codes < 0) | (codes >= len(names)), f"{name} must be one of {', '.join(names)}")
        return codes
    lookup = {v: k for k, v in enumerate(names)}
    codes = np.array([lookup.get(v, -1) for v in array.tolist()], dtype=np.int8)
    first_bad_row(codes, codes < 0, f"{name} must be one of {', '.join(names)}")
    return codes


def first_bad_row(values: np.ndarray, bad: np.ndarray, problem: str) -> None:
    if bad.any():
        raise SampleError(int(np.flatnonzero(bad)[0]), problem)
