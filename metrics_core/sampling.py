"""Weighted two-stage sampling of item pairs, with replacement (abcde-spec §3-4; JDD §7).

The pair population (affected vantage item ``i``, partner ``j`` in Base(i) ∪ Exp(i))
grows with the square of cluster sizes and is never materialised. Each scheme
gives every pair a sampling weight; for a vantage item the total weight of its
pairs of each class (its *class masses*) has a closed form. A draw then picks

1. the vantage item ``i`` in proportion to its total mass in the stratum,
2. a class in proportion to ``i``'s mass of that class,
3. the partner ``j`` in proportion to its weight within that class's item set:
   ``split`` = Base(i) \\ cell, ``merge`` = Exp(i) \\ cell,
   ``intersection`` = cell \\ {i}, ``self`` = {i}.

Step 3 searches a cumulative weight array of the affected items sorted by
(Base cluster, cell) or (Exp cluster, cell): each class set is a contiguous
segment minus a contiguous sub-segment. Time O(N log N) once, then O(log N) a
draw; memory O(N + S).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import as_1d, generator, one_of, open_unit_interval, positive_int
from .impact import cell_pointwise_metrics, cell_set_weights
from .population import Population

SCHEMES: tuple[str, ...] = ("jaccard", "stratified", "precision")
PAIR_CLASSES: tuple[str, ...] = ("self", "split", "merge", "intersection")
STRATA: tuple[str, ...] = ("all", "diff", "stable")

SELF, SPLIT, MERGE, INTERSECTION = range(4)
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
        i: Any,
        j: Any,
        draws: Any,
        pair_class: Any = None,
        stratum: Any = None,
        diff_share: float | None = None,
    ) -> "PairSample":
        """Rebuild a sample from stored columns, checking it against the population.

        ``pair_class`` and ``stratum`` may be codes or names; when omitted they are
        derived from the population. Raises :class:`SampleError` naming the first
        row that does not belong to the scheme's pair population.
        """
        one_of("scheme", scheme, SCHEMES)
        i, j, draws = (as_1d(name, v).astype(np.int64) for name, v in (("i", i), ("j", j), ("draws", draws)))
        n = population.n_items
        for name, positions in (("i", i), ("j", j)):
            _first_bad(positions, (positions < 0) | (positions >= n), f"{name} is not an item of the population")
        _first_bad(draws, draws < 1, "draws must be at least 1")
        actual = pair_classes_of(population, i, j)
        _first_bad(actual, actual < 0, "j is not in Base(i) ∪ Exp(i) of an affected item i")
        if pair_class is not None:
            given = _codes("pair_class", pair_class, PAIR_CLASSES)
            _first_bad(given, given != actual, "pair_class does not match the clusterings")
        expected_stratum = _stratum_of(scheme, actual)
        if stratum is not None:
            given = _codes("stratum", stratum, STRATA)
            _first_bad(given, given != expected_stratum, f"stratum does not match scheme {scheme}")
        keys = (expected_stratum.astype(np.int64) * n + i) * n + j
        _, first, counts = np.unique(keys, return_index=True, return_counts=True)
        if (counts > 1).any():
            duplicated = np.setdiff1d(np.arange(len(keys)), first)
            raise SampleError(int(duplicated.min()), "duplicate pair (i, j)")
        return cls(scheme, i, j, actual, expected_stratum, draws, diff_share)


def sample_pairs(
    population: Population,
    *,
    n_draws: int,
    scheme: str = "jaccard",
    rng: np.random.Generator,
    diff_share: float = 0.5,
) -> PairSample:
    """Draw ``n_draws`` pairs with replacement under a sampling scheme.

    Parameters
    ----------
    population : Population
    n_draws : int
        Number of draws S; the returned draw counts sum to S.
    scheme : {"jaccard", "stratified", "precision"}
        ``jaccard``: P(i, j) ∝ w_ij (JDD §7). ``stratified``: the diff pairs
        (split, merge) and the stable pairs (self, intersection) sampled separately
        ∝ w_ij, ``diff_share`` of the draws going to the diff stratum.
        ``precision``: P(i, j) ∝ u_ij, the natural distribution of ΔPrecision
        (abcde-spec §4c).
    rng : numpy.random.Generator
    diff_share : float
        Share of the draws for the diff stratum (``stratified`` only):
        ``round(diff_share · n_draws)``, kept within [1, n_draws − 1] so that each
        stratum gets at least one draw when ``n_draws`` ≥ 2.

    Returns
    -------
    PairSample

    Examples
    --------
    >>> from metrics_core import population_from_labels
    >>> pop = population_from_labels(["a", "a", "a", "b"], ["x", "x", "y", "y"])
    >>> s = sample_pairs(pop, n_draws=1000, scheme="jaccard", rng=np.random.default_rng(1))
    >>> s.n_draws, sorted({PAIR_CLASSES[c] for c in s.pair_class})
    (1000, ['intersection', 'merge', 'self', 'split'])
    """
    pop = population
    n_draws = positive_int("n_draws", n_draws)
    one_of("scheme", scheme, SCHEMES)
    rng = generator("rng", rng)
    if scheme == "stratified":
        diff_share = open_unit_interval("diff_share", diff_share)
    layout = _Layout.build(pop)
    if len(layout.affected) == 0:
        raise ValueError("nothing to sample: no item is affected (Base and Exp are identical)")
    masses = class_masses(pop, scheme, layout.affected)
    parts = []
    for stratum, count in _allocate(scheme, n_draws, diff_share).items():
        classes = SCHEME_STRATA[scheme][stratum]
        parts.append(_draw(layout, masses, classes, count, rng) + (np.full(count, stratum, np.int8),))
    i, j, pair_class, stratum = (np.concatenate(columns) for columns in zip(*parts))
    return _distinct(scheme, pop.n_items, i, j, pair_class, stratum, diff_share if scheme == "stratified" else None)


def class_masses(population: Population, scheme: str, items: np.ndarray) -> np.ndarray:
    """Total sampling weight of the pairs of each class, per vantage item.

    Returns an array of shape (len(items), 4), columns in :data:`PAIR_CLASSES`
    order: for ``jaccard`` and ``stratified`` Σ_j w_ij, for ``precision`` Σ_j u_ij
    (abcde-spec §3, §4c), over ``j`` in the class set of ``i``.
    """
    pop = population
    cell = pop.cell[items]
    w_i = pop.weight[items]
    sets = {name: values[cell] for name, values in cell_set_weights(pop).items()}
    share = w_i / pop.total_weight
    others_in_cell = np.where(pop.cell_size[cell] > 1, np.maximum(sets["both"] - w_i, 0.0), 0.0)
    masses = np.empty((len(items), 4))
    if scheme == "precision":
        stable_factor = np.abs(1.0 / sets["exp"] - 1.0 / sets["base"])
        masses[:, SELF] = share * w_i * stable_factor
        masses[:, INTERSECTION] = share * others_in_cell * stable_factor
        masses[:, SPLIT] = share * sets["split"] / sets["base"]
        masses[:, MERGE] = share * sets["merge"] / sets["exp"]
    else:
        masses[:, SELF] = share * w_i / sets["union"]
        masses[:, INTERSECTION] = share * others_in_cell / sets["union"]
        masses[:, SPLIT] = share * sets["split"] / sets["union"]
        masses[:, MERGE] = share * sets["merge"] / sets["union"]
    return masses


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


def pairs_for_judgement(sample: PairSample, *, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The distinct unordered non-self pairs of a sample, in random order.

    Self pairs need no verdict (an item is always equivalent to itself), and a
    verdict on ``{i, j}`` serves both ``(i, j)`` and ``(j, i)``. Showing pairs in
    random order keeps the judged subset a random subset at every moment.

    Returns
    -------
    a, b : ndarray of int64
        Item positions with ``a < b``.
    """
    rng = generator("rng", rng)
    keep = sample.pair_class != SELF
    low = np.minimum(sample.i[keep], sample.j[keep])
    high = np.maximum(sample.i[keep], sample.j[keep])
    pairs = np.unique(np.stack([low, high], axis=1), axis=0)
    pairs = pairs[rng.permutation(len(pairs))]
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def jaccard_contributions(population: Population, sample: PairSample) -> np.ndarray:
    """Each row's contribution to JaccardDistance(T) (JDD §4.5), 0 for stable pairs.

    A diff pair drawn ``d`` of the ``D`` diff draws contributes
    ``d / D · JaccardDistance(T)``; under the ``precision`` scheme draws are first
    importance-weighted by w_ij / u_ij so that they represent w_ij. The diff rows
    sum to JaccardDistance(T); filter rows to see a slice's share.
    """
    pop = population
    diff = (sample.pair_class == SPLIT) | (sample.pair_class == MERGE)
    weight = np.where(diff, sample.draws, 0).astype(np.float64)
    if sample.scheme == "precision":
        sets = cell_set_weights(pop)
        cell = pop.cell[sample.i]
        side = np.where(sample.pair_class == SPLIT, sets["base"][cell], sets["exp"][cell])
        weight *= side / sets["union"][cell]
    total = weight.sum()
    if total == 0:
        return np.zeros(len(sample))
    jaccard_distance = float(
        np.dot(pop.cell_weight, cell_pointwise_metrics(pop)["JaccardDistance"]) / pop.total_weight
    )
    return weight / total * jaccard_distance


@dataclass(frozen=True)
class _Ordering:
    """Affected items sorted by (group, cell), with cumulative weights."""

    order: np.ndarray  # position -> item
    position: np.ndarray  # item -> position (only meaningful for affected items)
    group_sorted: np.ndarray
    key_sorted: np.ndarray
    cumulative: np.ndarray  # length len(order) + 1

    @classmethod
    def build(cls, pop: Population, affected: np.ndarray, group: np.ndarray) -> "_Ordering":
        key = group[affected] * len(pop.cell_weight) + pop.cell[affected]
        local = np.argsort(key, kind="stable")
        order = affected[local]
        position = np.empty(pop.n_items, dtype=np.int64)
        position[order] = np.arange(len(order))
        cumulative = np.concatenate(([0.0], np.cumsum(pop.weight[order])))
        return cls(order, position, group[order], key[local], cumulative)

    def draw(
        self, lo: np.ndarray, hi: np.ndarray, ex_lo: np.ndarray, ex_hi: np.ndarray, u: np.ndarray
    ) -> np.ndarray:
        """Items drawn ∝ weight from positions [lo, hi) minus [ex_lo, ex_hi)."""
        cum = self.cumulative
        excluded = cum[ex_hi] - cum[ex_lo]
        target = cum[lo] + u * (cum[hi] - cum[lo] - excluded)
        shifted = target >= cum[ex_lo]
        target = np.where(shifted, target + excluded, target)
        pos = np.searchsorted(cum, target, side="right") - 1
        pos = np.clip(pos, lo, hi - 1)
        # Rounding can land on the excluded segment's edge: step out of it.
        inside = (pos >= ex_lo) & (pos < ex_hi)
        pos = np.where(inside & shifted, ex_hi, np.where(inside, ex_lo - 1, pos))
        return self.order[pos]

    def segment(self, sorted_values: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.searchsorted(sorted_values, values, side="left"),
            np.searchsorted(sorted_values, values, side="right"),
        )


@dataclass(frozen=True)
class _Layout:
    affected: np.ndarray
    by_base: _Ordering
    by_exp: _Ordering

    @classmethod
    def build(cls, pop: Population) -> "_Layout":
        affected = np.flatnonzero(pop.cell_affected()[pop.cell])
        by_base = _Ordering.build(pop, affected, pop.base)
        by_exp = _Ordering.build(pop, affected, pop.exp)
        return cls(affected, by_base, by_exp)


def _allocate(scheme: str, n_draws: int, diff_share: float) -> dict[int, int]:
    if scheme != "stratified":
        return {ALL: n_draws}
    if n_draws == 1:
        return {DIFF: 1} if diff_share >= 0.5 else {STABLE: 1}
    n_diff = min(max(int(round(diff_share * n_draws)), 1), n_draws - 1)
    return {DIFF: n_diff, STABLE: n_draws - n_diff}


def _draw(
    layout: _Layout, masses: np.ndarray, classes: tuple[int, ...], count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    stratum_masses = masses[:, classes]
    totals = stratum_masses.sum(axis=1)
    vantage_local = _choose(np.cumsum(totals), rng.random(count))
    i = layout.affected[vantage_local]
    within = np.cumsum(stratum_masses[vantage_local], axis=1)
    pick = (rng.random(count) * within[:, -1])[:, None] >= within
    pick_index = np.minimum(pick.sum(axis=1), len(classes) - 1)
    # Never pick a class of zero mass through rounding at the upper edge.
    zero = stratum_masses[vantage_local, pick_index] <= 0
    if zero.any():
        pick_index[zero] = np.argmax(stratum_masses[vantage_local[zero]] > 0, axis=1)
    pair_class = np.asarray(classes, dtype=np.int8)[pick_index]
    j = _partners(layout, i, pair_class, rng.random(count))
    return i, j, pair_class


def _choose(cumulative: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Indices drawn ∝ the increments of ``cumulative``; zero increments never drawn."""
    index = np.searchsorted(cumulative, u * cumulative[-1], side="right")
    last_positive = int(np.flatnonzero(np.diff(np.concatenate(([0.0], cumulative))) > 0)[-1])
    return np.minimum(index, last_positive)


def _partners(layout: _Layout, i: np.ndarray, pair_class: np.ndarray, u: np.ndarray) -> np.ndarray:
    j = i.copy()
    base_order, exp_order = layout.by_base, layout.by_exp
    for cls, ordering in ((SPLIT, base_order), (INTERSECTION, base_order), (MERGE, exp_order)):
        rows = np.flatnonzero(pair_class == cls)
        if len(rows) == 0:
            continue
        items = i[rows]
        position = ordering.position[items]
        cell_lo, cell_hi = ordering.segment(ordering.key_sorted, ordering.key_sorted[position])
        if cls == INTERSECTION:
            lo, hi, ex_lo, ex_hi = cell_lo, cell_hi, position, position + 1
        else:
            lo, hi = ordering.segment(ordering.group_sorted, ordering.group_sorted[position])
            ex_lo, ex_hi = cell_lo, cell_hi
        j[rows] = ordering.draw(lo, hi, ex_lo, ex_hi, u[rows])
    return j


def _distinct(
    scheme: str,
    n_items: int,
    i: np.ndarray,
    j: np.ndarray,
    pair_class: np.ndarray,
    stratum: np.ndarray,
    diff_share: float | None,
) -> PairSample:
    keys = (stratum.astype(np.int64) * n_items + i) * n_items + j
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    return PairSample(scheme, i[first], j[first], pair_class[first], stratum[first], counts.astype(np.int64), diff_share)


def _stratum_of(scheme: str, pair_class: np.ndarray) -> np.ndarray:
    if scheme != "stratified":
        return np.full(len(pair_class), ALL, dtype=np.int8)
    diff = (pair_class == SPLIT) | (pair_class == MERGE)
    return np.where(diff, DIFF, STABLE).astype(np.int8)


def _codes(name: str, values: Any, names: tuple[str, ...]) -> np.ndarray:
    array = as_1d(name, values)
    if array.dtype.kind in "iu":
        codes = array.astype(np.int8)
        _first_bad(codes, (codes < 0) | (codes >= len(names)), f"{name} must be one of {', '.join(names)}")
        return codes
    lookup = {v: k for k, v in enumerate(names)}
    codes = np.array([lookup.get(v, -1) for v in array.tolist()], dtype=np.int8)
    _first_bad(codes, codes < 0, f"{name} must be one of {', '.join(names)}")
    return codes


def _first_bad(values: np.ndarray, bad: np.ndarray, problem: str) -> None:
    if bad.any():
        raise SampleError(int(np.flatnonzero(bad)[0]), problem)
