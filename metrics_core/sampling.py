"""Weighted two-stage sampling of item pairs, with replacement (abcde-spec §3-4; JDD §7).

The pair population (affected vantage item ``i``, partner ``j`` in Base(i) ∪ Exp(i))
grows with the square of cluster sizes and is never materialised. Each scheme gives
every pair a sampling weight (:mod:`metrics_core.masses`). A draw picks

1. the vantage item ``i`` in proportion to its total mass in the stratum, which is
   w_i times a factor of its cell: a cell, then an item of it ∝ weight;
2. a class in proportion to ``i``'s mass of that class;
3. the partner ``j`` in proportion to its weight within that class's set:
   ``split`` = a cell of Base(i) other than i's own ∝ its weight, then an item of it;
   ``merge`` likewise in Exp(i); ``intersection`` = i's cell minus i; ``self`` = i.

Each step is a binary search in a cumulative weight array of a sorted layout of the
cells and items the draws touch (:mod:`metrics_core._layout`): one O(N) pass over the
items' cell codes, then O(log N) a draw, memory O(N + S).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._layout import Segments, affected_cells, cells_of_clusters, items_of_cells
from ._validation import as_1d, generator, one_of, open_unit_interval, positive_int
from .impact import cell_pointwise_metrics
from .masses import INTERSECTION, MERGE, SELF, SPLIT, cell_stratum_factor, class_masses
from .population import Population

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
        i: Any,
        j: Any,
        draws: Any,
        pair_class: Any = None,
        stratum: Any = None,
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
            if not repeated:
                duplicated = np.setdiff1d(np.arange(len(keys)), first)
                raise SampleError(int(duplicated.min()), "duplicate pair (i, j)")
            return _first_seen(scheme, n, i, j, actual, expected_stratum, draws, diff_share)
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
    if not pop.cell_affected().any():
        raise ValueError("nothing to sample: no item is affected (Base and Exp are identical)")
    parts = []
    for stratum, count in _allocate(scheme, n_draws, diff_share).items():
        classes = SCHEME_STRATA[scheme][stratum]
        parts.append(_draw(pop, scheme, classes, count, rng) + (np.full(count, stratum, np.int8),))
    i, j, pair_class, stratum = (np.concatenate(columns) for columns in zip(*parts))
    return _distinct(scheme, pop.n_items, i, j, pair_class, stratum, diff_share if scheme == "stratified" else None)


def batch_rng(*, seed: int, batch: int) -> np.random.Generator:
    """The random stream of batch ``batch`` of an experiment sampled with ``seed`` (abcde-spec §10).

    Batch 0 is ``np.random.default_rng(seed)``, the experiment's first sample; batch ``b ≥ 1``
    is the ``b``-th child ``SeedSequence(seed, spawn_key=(b,))``, so it depends only on
    ``(seed, b)`` and its draws are independent of every other batch's. Pass it as ``rng=`` to
    :func:`sample_pairs` (or the Dask backend's): the union of batches is one i.i.d. sample.

    Examples
    --------
    >>> first = batch_rng(seed=7, batch=0).random()
    >>> first == np.random.default_rng(7).random()
    True
    >>> batch_rng(seed=7, batch=2).random() == batch_rng(seed=7, batch=2).random() != first
    True
    """
    seed, batch = _seed_and_batch(seed, batch)
    if batch == 0:
        return np.random.default_rng(seed)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(batch,)))


def batch_order_rng(*, seed: int, batch: int) -> np.random.Generator:
    """The random stream that orders the new tasks of batch ``batch`` (:func:`pairs_for_judgement`).

    Batch 0 is ``np.random.default_rng(seed + 1)`` (the order of an experiment's first tasks);
    batch ``b ≥ 1`` is ``SeedSequence(seed, spawn_key=(b, 1))``, independent of the draws.

    Examples
    --------
    >>> batch_order_rng(seed=7, batch=0).random() == np.random.default_rng(8).random()
    True
    """
    seed, batch = _seed_and_batch(seed, batch)
    if batch == 0:
        return np.random.default_rng(seed + 1)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(batch, 1)))


def _seed_and_batch(seed: Any, batch: Any) -> tuple[int, int]:
    for name, value in (("seed", seed), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(seed), int(batch)


def concatenate_samples(samples: Sequence[PairSample]) -> PairSample:
    """One sample from several batches of one experiment: the draws of a repeated ``(i, j)`` add up.

    Draws are i.i.d., so the union of batches is one sample of all their draws (abcde-spec §10).
    Rows keep the order in which each distinct ``(stratum, i, j)`` is first seen. Every sample
    must have the same scheme and ``diff_share``.

    Examples
    --------
    >>> from metrics_core import population_from_labels
    >>> pop = population_from_labels([0, 0, 0], [0, 0, 1])
    >>> batches = [sample_pairs(pop, n_draws=50, rng=batch_rng(seed=3, batch=b)) for b in range(3)]
    >>> both = concatenate_samples(batches)
    >>> both.n_draws, len(both) <= sum(len(b) for b in batches)
    (150, True)
    """
    samples = list(samples)
    if not samples:
        raise ValueError("samples must hold at least one PairSample")
    first = samples[0]
    for k, sample in enumerate(samples[1:], start=1):
        if not isinstance(sample, PairSample):
            raise TypeError(f"samples[{k}] is a {type(sample).__name__}, not a PairSample")
        if (sample.scheme, sample.diff_share) != (first.scheme, first.diff_share):
            raise ValueError(
                f"samples[{k}] has scheme {sample.scheme!r} and diff_share {sample.diff_share!r}; "
                f"samples[0] has {first.scheme!r} and {first.diff_share!r}"
            )
    column = lambda name: np.concatenate([getattr(s, name) for s in samples])  # noqa: E731
    i, j = column("i"), column("j")
    n = int(max(i.max(initial=0), j.max(initial=0))) + 1
    return _first_seen(
        first.scheme, n, i, j, column("pair_class"), column("stratum"), column("draws"), first.diff_share
    )


def _first_seen(
    scheme: str,
    n_items: int,
    i: np.ndarray,
    j: np.ndarray,
    pair_class: np.ndarray,
    stratum: np.ndarray,
    draws: np.ndarray,
    diff_share: float | None,
) -> PairSample:
    """Distinct ``(stratum, i, j)`` rows in first-seen order, their draws summed."""
    keys = (stratum.astype(np.int64) * n_items + i) * n_items + j
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    rows = first[order]
    summed = np.bincount(rank[inverse], weights=draws, minlength=len(rows)).astype(np.int64)
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


def jaccard_contributions(population, sample: PairSample) -> np.ndarray:
    """Each row's contribution to JaccardDistance(T) (JDD §4.5), 0 for stable pairs.

    ``population`` is a :class:`Population` or a :class:`~metrics_core.SampleContext` of the whole sample.

    A diff pair drawn ``d`` of the ``D`` diff draws contributes
    ``d / D · JaccardDistance(T)``; under the ``precision`` scheme draws are first
    importance-weighted by w_ij / u_ij so that they represent w_ij. The diff rows
    sum to JaccardDistance(T); filter rows to see a slice's share.
    """
    from .context import SampleContext  # the context module builds on this one

    diff = (sample.pair_class == SPLIT) | (sample.pair_class == MERGE)
    weight = np.where(diff, sample.draws, 0).astype(np.float64)
    if isinstance(population, SampleContext):
        if len(population.rows) != len(sample):
            raise ValueError("jaccard_contributions needs the context of every row of the sample")
        sets = {"base": population.base, "exp": population.exp, "union": population.union}
        jaccard_distance = population.exact["JaccardDistance"]
    else:
        pop = population
        sets = {name: pop.cell_sets[name][pop.cell[sample.i]] for name in ("base", "exp", "union")}
        jaccard_distance = float(
            np.dot(pop.cell_weight, cell_pointwise_metrics(pop)["JaccardDistance"]) / pop.total_weight
        )
    if sample.scheme == "precision":
        side = np.where(sample.pair_class == SPLIT, sets["base"], sets["exp"])
        weight *= side / sets["union"]
    total = weight.sum()
    if total == 0:
        return np.zeros(len(sample))
    return weight / total * jaccard_distance


def _allocate(scheme: str, n_draws: int, diff_share: float) -> dict[int, int]:
    if scheme != "stratified":
        return {ALL: n_draws}
    if n_draws == 1:
        return {DIFF: 1} if diff_share >= 0.5 else {STABLE: 1}
    n_diff = min(max(int(round(diff_share * n_draws)), 1), n_draws - 1)
    return {DIFF: n_diff, STABLE: n_draws - n_diff}


def _draw(
    pop: Population, scheme: str, classes: tuple[int, ...], count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    affected = affected_cells(pop)
    cell_mass = pop.cell_weight[affected] * cell_stratum_factor(pop, scheme, classes)[affected]
    cell = affected[_choose(np.cumsum(cell_mass), rng.random(count))]
    # Only the touched cells are laid out: the vantage cells and every affected cell of their
    # Base and Exp clusters (where the partners are).
    by_base = cells_of_clusters(pop, pop.cell_base, pop.cell_base[cell], len(pop.base_labels))
    by_exp = cells_of_clusters(pop, pop.cell_exp, pop.cell_exp[cell], len(pop.exp_labels))
    items = items_of_cells(pop, np.concatenate((cell, by_base.order, by_exp.order)))
    i = items.draw(*items.bounds(cell), None, rng.random(count))
    pair_class = pick_classes(class_masses(pop, scheme, i), classes, rng.random(count))
    j = _partners(pop, items, by_base, by_exp, i, pair_class, rng.random((2, count)))
    return i, j, pair_class


def pick_classes(masses: np.ndarray, classes: tuple[int, ...], u: np.ndarray) -> np.ndarray:
    """The class of each draw ∝ its vantage item's class ``masses`` (shape (n, 4)), from uniforms ``u``.

    Only ``classes`` (a stratum's) take part; returns int8 class codes. Shared by the backends.
    """
    masses = masses[:, classes]
    within = np.cumsum(masses, axis=1)
    pick = np.minimum(((u * within[:, -1])[:, None] >= within).sum(axis=1), len(classes) - 1)
    # Never pick a class of zero mass through rounding at the upper edge.
    zero = masses[np.arange(len(u)), pick] <= 0
    if zero.any():
        pick[zero] = np.argmax(masses[zero] > 0, axis=1)
    return np.asarray(classes, dtype=np.int8)[pick]


def _choose(cumulative: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Indices drawn ∝ the increments of ``cumulative``; zero increments never drawn."""
    index = np.searchsorted(cumulative, u * cumulative[-1], side="right")
    # The sums never decrease: the last positive increment is where the total is first reached.
    last_positive = int(np.searchsorted(cumulative, cumulative[-1], side="left"))
    return np.minimum(index, last_positive)


def _partners(
    pop: Population,
    items: Segments,
    by_base: Segments,
    by_exp: Segments,
    i: np.ndarray,
    pair_class: np.ndarray,
    u: np.ndarray,
) -> np.ndarray:
    j = i.copy()
    cell = pop.cell[i]
    rows = np.flatnonzero(pair_class == INTERSECTION)
    lo, hi = items.bounds(cell[rows])
    skip = items.locate(lo, hi, i[rows])
    j[rows] = items.draw(lo, hi, skip, u[0, rows])
    for cls, cells, group_of_cell in ((SPLIT, by_base, pop.cell_base), (MERGE, by_exp, pop.cell_exp)):
        rows = np.flatnonzero(pair_class == cls)
        own = cell[rows]
        lo, hi = cells.bounds(group_of_cell[own])
        other = cells.draw(lo, hi, cells.locate(lo, hi, own), u[0, rows])
        j[rows] = items.draw(*items.bounds(other), None, u[1, rows])
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
    return PairSample(
        scheme, i[first], j[first], pair_class[first], stratum[first], counts.astype(np.int64), diff_share
    )


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
