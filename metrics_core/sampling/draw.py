"""Drawing pairs (abcde-spec §5): draws allocated to strata, classes picked by mass, partners by weight."""

from __future__ import annotations

import numpy as np

from .._layout import Segments, affected_cells, cells_of_clusters, items_of_cells, ordered_searchsorted
from .._validation import generator, one_of, open_unit_interval, positive_int
from ..masses import INTERSECTION, MERGE, SPLIT, cell_stratum_masses, class_masses
from ..population import Population
from .core import ALL, DIFF, SCHEME_STRATA, SCHEMES, STABLE, PairSample, distinct_rows


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
    >>> from metrics_core import PAIR_CLASSES, population_from_labels
    >>> pop = population_from_labels(["a", "a", "a", "b"], ["x", "x", "y", "y"])
    >>> s = sample_pairs(pop, n_draws=1000, scheme="jaccard", rng=np.random.default_rng(1))
    >>> s.n_draws, sorted({PAIR_CLASSES[c] for c in s.pair_class})
    (1000, ['intersection', 'merge', 'self', 'split'])
    """
    pop = population
    n_draws, rng, diff_share = sampling_arguments(n_draws=n_draws, scheme=scheme, rng=rng, diff_share=diff_share)
    if not pop.cell_affected().any():
        raise ValueError("nothing to sample: no item is affected (Base and Exp are identical)")
    parts = []
    for code, count in allocate_draws(scheme, n_draws, diff_share).items():
        classes = SCHEME_STRATA[scheme][code]
        parts.append(draw_rows(pop, scheme, classes, count, rng) + (np.full(count, code, np.int8),))
    i, j, pair_class, stratum = (np.concatenate(columns) for columns in zip(*parts))
    stratified_share = diff_share if scheme == "stratified" else None
    return distinct_rows(scheme, pop.n_items, i, j, pair_class, stratum, None, stratified_share, first_seen=False)


def sampling_arguments(
    *, n_draws: int, scheme: str, rng: np.random.Generator, diff_share: float
) -> tuple[int, np.random.Generator, float]:
    """The arguments every sampler takes, validated; ``diff_share`` is checked for ``stratified`` only."""
    n_draws = positive_int("n_draws", n_draws)
    one_of("scheme", scheme, SCHEMES)
    rng = generator("rng", rng)
    if scheme == "stratified":
        diff_share = open_unit_interval("diff_share", diff_share)
    return n_draws, rng, diff_share


def allocate_draws(scheme: str, n_draws: int, diff_share: float) -> dict[int, int]:
    if scheme != "stratified":
        return {ALL: n_draws}
    if n_draws == 1:
        return {DIFF: 1} if diff_share >= 0.5 else {STABLE: 1}
    n_diff = min(max(int(round(diff_share * n_draws)), 1), n_draws - 1)
    return {DIFF: n_diff, STABLE: n_draws - n_diff}


def draw_rows(
    pop: Population, scheme: str, classes: tuple[int, ...], count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    affected = affected_cells(pop)
    cell_mass = cell_stratum_masses(pop, scheme, classes, affected)
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
    index = ordered_searchsorted(cumulative, u * cumulative[-1], "right")
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
