"""Sampling weight of the pair population, per vantage item, per class (abcde-spec §3, §4).

``jaccard`` and ``stratified`` weigh a pair by w_ij = w_i·w_j / (W·weight(U)); ``precision``
by u_ij = (w_i/W)·w_j·c_ij (spec §4c). Summed over the partners j of one class, a vantage
item's *class mass* has a closed form in the weights of its cell. The exact class totals
(for example Σ over split pairs of w_ij = SplitDistance(T)) are the multipliers of the
estimates; they are sums over cells, so no per-item or per-pair array is needed.
"""

from __future__ import annotations

import weakref

import numpy as np

from .population import Population

SELF, SPLIT, MERGE, INTERSECTION = range(4)


def class_masses(population: Population, scheme: str, items: np.ndarray) -> np.ndarray:
    """Total sampling weight of the pairs of each class, per vantage item.

    Returns an array of shape (len(items), 4), columns self, split, merge,
    intersection: Σ_j w_ij (``jaccard``, ``stratified``) or Σ_j u_ij (``precision``)
    over ``j`` in the class's set for ``i``. Zero for unaffected items.
    """
    pop = population
    cell = pop.cell[items]
    return item_class_masses(
        scheme,
        sets=pop.cell_sets_at(cell),
        weight=pop.weight[items],
        affected=pop.cell_affected()[cell],
        cell_size=pop.cell_size[cell],
        total_weight=pop.total_weight,
    )


def item_class_masses(
    scheme: str,
    *,
    sets: dict[str, np.ndarray],
    weight: np.ndarray,
    affected: np.ndarray,
    cell_size: np.ndarray,
    total_weight: float,
) -> np.ndarray:
    """:func:`class_masses` of vantage items given row by row (every backend's one formula).

    ``sets`` are the :attr:`Population.cell_sets` of each item's cell, ``weight`` the item's
    weight, ``affected`` and ``cell_size`` its cell's, ``total_weight`` W.
    """
    share = np.where(affected, weight / total_weight, 0.0)
    others_in_cell = np.where(cell_size > 1, np.maximum(sets["both"] - weight, 0.0), 0.0)
    stable_factor = _stable_factor(scheme, sets)
    masses = np.empty((len(weight), 4))
    masses[:, SELF] = share * weight * stable_factor
    masses[:, INTERSECTION] = share * others_in_cell * stable_factor
    masses[:, SPLIT] = share * _split_factor(scheme, sets)
    masses[:, MERGE] = share * _merge_factor(scheme, sets)
    return masses


def class_totals(population: Population, scheme: str, vantage: np.ndarray | None = None) -> np.ndarray:
    """Exact total sampling weight of each class, over vantage items (all when ``None``).

    Returns shape (4,): self, split, merge, intersection. For ``jaccard`` the split
    total is SplitDistance(T), the merge total MergeDistance(T) and self plus
    intersection AffectedJaccardIndex(T); for ``precision`` split and merge are
    SplitRate(T) and MergeRate(T).
    """
    return class_totals_of_schemes(population, (scheme,), vantage)[scheme]


def class_totals_of_schemes(
    population: Population, schemes: tuple[str, ...], vantage: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """:func:`class_totals` of each of ``schemes``, in one pass over the cells for all of them (the
    estimates need their scheme's totals and the precision ones for the rates)."""
    pop, schemes = population, tuple(dict.fromkeys(schemes))
    if vantage is not None:
        kept = np.where(vantage, pop.weight, 0.0)
        weight = np.bincount(pop.cell, weights=kept, minlength=len(pop.cell_weight))
        weight_sq = np.bincount(pop.cell, weights=kept * pop.weight, minlength=len(pop.cell_weight))
        return _class_totals(pop, schemes, weight, weight_sq)
    cached = _TOTALS.setdefault(pop, {})
    missing = tuple(scheme for scheme in schemes if scheme not in cached)
    if missing:
        cached.update(_class_totals(pop, missing, pop.cell_weight, pop.cell_weight_sq))
    return {scheme: cached[scheme] for scheme in schemes}


_TOTALS: weakref.WeakKeyDictionary[Population, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()


# Cells a block of :func:`_class_totals`: its temporaries stay under the command line's 1 MiB mmap
# threshold (``metrics_core.cli.lean_allocation``), so they reuse memory instead of fresh zeroed pages.
CELL_BLOCK = 1 << 14


def _class_totals(
    pop: Population, schemes: tuple[str, ...], weight: np.ndarray, weight_sq: np.ndarray
) -> dict[str, np.ndarray]:
    """Class totals of each scheme from per-cell sums of the vantage items' weights and squared weights.

    The terms are summed a block of cells at a time, each block's rows added after the sums so far:
    numpy sums the rows of one (cells, 4) array in that order, so the totals are the same to the bit.
    Only affected cells are visited: an unaffected cell's terms are exactly 0.0 (no split or merge
    weight, a zero stable factor), which leaves every sum unchanged. Each block's cells are gathered
    once for every scheme.
    """
    sets, affected = pop.cell_sets, pop.cell_affected()
    affected_cells = np.flatnonzero(affected)
    sums = {scheme: np.zeros((0, 4)) for scheme in schemes}
    for start in range(0, len(affected_cells), CELL_BLOCK):
        cells = affected_cells[start : start + CELL_BLOCK]
        block_sets = {name: values[cells] for name, values in sets.items()}
        block_affected, block_size = affected[cells], pop.cell_size[cells]
        block_weight, block_weight_sq = weight[cells], weight_sq[cells]
        for scheme in schemes:
            terms = cell_class_terms(
                scheme,
                sets=block_sets,
                affected=block_affected,
                cell_size=block_size,
                weight=block_weight,
                weight_sq=block_weight_sq,
            )
            sums[scheme] = np.concatenate([sums[scheme], terms]).sum(axis=0, keepdims=True)
    return {scheme: total.sum(axis=0) / pop.total_weight for scheme, total in sums.items()}


def cell_class_terms(
    scheme: str,
    *,
    sets: dict[str, np.ndarray],
    affected: np.ndarray,
    cell_size: np.ndarray,
    weight: np.ndarray,
    weight_sq: np.ndarray,
) -> np.ndarray:
    """Per cell, W times the class masses summed over its vantage items (every backend's one formula).

    ``weight`` and ``weight_sq`` are the sums of the vantage items' weights and squared
    weights in each cell. Returns shape (n_cells, 4): self, split, merge, intersection;
    the column sums over W are :func:`class_totals`.
    """
    # Σ over the cell's vantage items of weight(cell \ {i}) · w_i
    others = np.where(cell_size > 1, np.maximum(weight * sets["both"] - weight_sq, 0.0), 0.0)
    stable_factor = np.where(affected, _stable_factor(scheme, sets), 0.0)
    return np.column_stack(
        [
            weight_sq * stable_factor,
            weight * _split_factor(scheme, sets),
            weight * _merge_factor(scheme, sets),
            others * stable_factor,
        ]
    )


def cell_stratum_factor(population: Population, scheme: str, classes: tuple[int, ...]) -> np.ndarray:
    """Per cell f such that an item's total mass over ``classes`` is w_i · f / W.

    Self and intersection pairs always share a stratum: together they weigh
    w_i · weight(cell) · (stable factor).
    """
    return stratum_factor(scheme, classes, sets=population.cell_sets, affected=population.cell_affected())


def cell_stratum_masses(population: Population, scheme: str, classes: tuple[int, ...], cells: np.ndarray) -> np.ndarray:
    """weight(cell) · f of each of ``cells`` (affected ones), f of :func:`cell_stratum_factor`: its
    values at ``cells``, computed a block of cells at a time (no cell-sized temporaries).

    >>> from metrics_core import population_from_labels
    >>> pop = population_from_labels(["a", "a", "b"], ["x", "y", "y"], [1.0, 2.0, 4.0])
    >>> cells, classes = np.array([2, 0]), (SELF, SPLIT, MERGE, INTERSECTION)
    >>> masses = (pop.cell_weight * cell_stratum_factor(pop, "jaccard", classes))[cells]
    >>> bool(np.array_equal(cell_stratum_masses(pop, "jaccard", classes, cells), masses))
    True
    """
    masses = np.empty(len(cells))
    for start in range(0, len(cells), CELL_BLOCK):
        block = cells[start : start + CELL_BLOCK]
        factor = stratum_factor(
            scheme, classes, sets=population.cell_sets_at(block), affected=population.cell_affected()[block]
        )
        np.multiply(population.cell_weight[block], factor, out=masses[start : start + CELL_BLOCK])
    return masses


def stratum_factor(
    scheme: str, classes: tuple[int, ...], *, sets: dict[str, np.ndarray], affected: np.ndarray
) -> np.ndarray:
    """:func:`cell_stratum_factor` of cells given row by row by their ``sets`` and ``affected``."""
    factor = np.zeros(len(affected))
    if SPLIT in classes:
        factor += _split_factor(scheme, sets)
    if MERGE in classes:
        factor += _merge_factor(scheme, sets)
    if SELF in classes:
        factor += sets["both"] * _stable_factor(scheme, sets)
    return np.where(affected, factor, 0.0)


def _stable_factor(scheme: str, sets: dict[str, np.ndarray]) -> np.ndarray:
    if scheme == "precision":
        return np.abs(1.0 / sets["exp"] - 1.0 / sets["base"])
    return 1.0 / sets["union"]


def _split_factor(scheme: str, sets: dict[str, np.ndarray]) -> np.ndarray:
    return sets["split"] / (sets["base"] if scheme == "precision" else sets["union"])


def _merge_factor(scheme: str, sets: dict[str, np.ndarray]) -> np.ndarray:
    return sets["merge"] / (sets["exp"] if scheme == "precision" else sets["union"])
