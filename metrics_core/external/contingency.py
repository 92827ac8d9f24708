"""The truth × prediction contingency table as its nonzero cells, and group-wise helpers.

Every ground-truth measure is a function of this one table. It is never dense: a cell
exists only where some item has that (truth cluster, predicted cluster) pair, so its size
is at most the number of items whatever the cluster counts. The cells come straight from
:class:`~metrics_core.population.Population` (truth as Base, prediction as Exp), whose
factorisation is the only O(N) hashing step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._sorting import stable_argsort_codes
from ..population import Population


@dataclass(frozen=True, eq=False)
class Contingency:
    """Nonzero cells of the weighted truth × prediction table and its margins.

    Attributes
    ----------
    row, col : ndarray of int64, shape (n_cells,)
        Truth and predicted cluster code of each cell.
    weight, count : ndarray, shape (n_cells,)
        Total item weight (float64) and item count (int64) of each cell.
    weight_sq : ndarray of float64, shape (n_cells,)
        Sum of squared item weights of each cell (pairs of distinct items).
    row_weight, row_count, col_weight, col_count : ndarray
        The same totals per truth and per predicted cluster.
    unit_weights : bool
        Whether every item weighs 1.0 (weights are then counts).
    pair_weight : ndarray of float64, shape (n_cells,), optional
        Mass of the pairs of distinct items of each cell, ``Σ_{d<e} w_d·w_e``, computed without
        cancellation (:func:`pair_masses`); None with unit weights (pairs are then counted).
    """

    row: np.ndarray
    col: np.ndarray
    weight: np.ndarray
    count: np.ndarray
    weight_sq: np.ndarray
    row_weight: np.ndarray
    row_count: np.ndarray
    col_weight: np.ndarray
    col_count: np.ndarray
    unit_weights: bool
    pair_weight: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """Truth clusters by predicted clusters."""
        return len(self.row_weight), len(self.col_weight)

    @property
    def total_weight(self) -> float:
        return float(self.row_weight.sum())

    @property
    def n_items(self) -> int:
        return int(self.row_count.sum())

    def row_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of a per-cell quantity over each truth cluster."""
        return np.bincount(self.row, weights=values, minlength=self.shape[0])

    def col_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of a per-cell quantity over each predicted cluster."""
        return np.bincount(self.col, weights=values, minlength=self.shape[1])


def contingency_from_population(population: Population) -> Contingency:
    """The contingency table of a population whose Base is the truth and Exp the prediction."""
    pop = population
    return Contingency(
        row=pop.cell_base,
        col=pop.cell_exp,
        weight=pop.cell_weight,
        count=pop.cell_size,
        weight_sq=pop.cell_weight_sq,
        row_weight=pop.base_weight,
        row_count=pop.base_size,
        col_weight=pop.exp_weight,
        col_count=pop.exp_size,
        unit_weights=pop.unit_weights,
        pair_weight=None if pop.unit_weights else pair_masses(pop.cell, len(pop.cell_weight), pop.weight),
    )


# ---------------------------------------------------------------------------- group helpers


def group_max(group: np.ndarray, n_groups: int, values: np.ndarray) -> np.ndarray:
    """Maximum of ``values`` per group; 0 for a group with no value."""
    order, first, groups = _runs(group, n_groups)
    top = np.zeros(n_groups)
    if len(order):
        top[groups] = np.maximum.reduceat(values[order], first)
    return top


def group_top_two(group: np.ndarray, n_groups: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group: the index of one largest value, that value, and the largest of the others.

    A group with no value has index -1 and maxima 0; a group with one value has second 0.

    >>> argmax, top, second = group_top_two(np.array([1, 0, 1, 1]), 3, np.array([5.0, 2.0, 7.0, 7.0]))
    >>> argmax.tolist(), top.tolist(), second.tolist()
    ([1, 2, -1], [2.0, 7.0, 0.0], [0.0, 7.0, 0.0])
    """
    order, first, groups = _runs(group, n_groups)
    argmax = np.full(n_groups, -1, dtype=np.int64)
    top, second = np.zeros(n_groups), np.zeros(n_groups)
    if len(order) == 0:
        return argmax, top, second
    sorted_group, sorted_values = group[order], values[order]
    top[groups] = np.maximum.reduceat(sorted_values, first)
    # The first position of each run that holds the run's maximum is its argmax.
    at_max = np.flatnonzero(sorted_values == top[sorted_group])
    first_at_max = at_max[np.r_[True, sorted_group[at_max[1:]] != sorted_group[at_max[:-1]]]]
    argmax[sorted_group[first_at_max]] = order[first_at_max]
    others = sorted_values.copy()
    others[first_at_max] = 0.0
    second[groups] = np.maximum.reduceat(others, first)
    return argmax, top, second


def pair_masses(group: np.ndarray, n_groups: int, weight: np.ndarray) -> np.ndarray:
    """Per group, the mass of its pairs of distinct members ``Σ_{d<e} w_d·w_e`` (0 for fewer than two).

    ``(W² − Σw²)/2`` cancels when one member outweighs the rest (1e16 times: nothing is left).
    Here the heaviest member's pairs are ``M·R``, with ``R`` the others' weight summed directly,
    and the others' pairs ``(R² − Σ_rest w²)/2``, whose cancellation is at most ``ε·R²/2 ≤ ε·M·R/2``:
    relative error of a few ε whatever the weights.

    >>> pair_masses(np.array([0, 0, 0, 1]), 3, np.array([1.0, 2.0, 3.0, 4.0])).tolist()
    [11.0, 0.0, 0.0]
    >>> float(pair_masses(np.zeros(3, dtype=np.int64), 1, np.array([1e20, 1.0, 1.0]))[0])
    2e+20
    """
    argmax, top, _ = group_top_two(group, n_groups, weight)
    rest = np.ones(len(weight), dtype=bool)
    rest[argmax[argmax >= 0]] = False
    others = np.bincount(group[rest], weights=weight[rest], minlength=n_groups)
    squares = np.bincount(group[rest], weights=weight[rest] ** 2, minlength=n_groups)
    return top * others + np.maximum(others * others - squares, 0.0) / 2


def _runs(group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An order that sorts ``group``, where each run of equal codes starts, and its code."""
    order = stable_argsort_codes(group, n_groups)
    sorted_group = group[order]
    first = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]]) if len(order) else order
    return order, first, sorted_group[first]


def exclusive_group_product(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """For runs of ``values`` beginning at ``starts``, the product of the earlier values in the run.

    A segmented scan by doubling: log2(longest run) vectorised passes, exact products
    (no logarithms, so zeros need no special case).

    >>> exclusive_group_product(np.array([0.5, 0.5, 0.5, 0.2, 0.0, 0.3]), np.array([0, 3])).tolist()
    [1.0, 0.5, 0.25, 1.0, 0.2, 0.0]
    """
    n = len(values)
    run_start = np.zeros(n, dtype=np.int64)
    run_start[starts] = starts
    run_start = np.maximum.accumulate(run_start)
    product = values.copy()
    position = np.arange(n)
    step = 1
    longest = int((np.diff(np.r_[starts, n])).max()) if n else 0
    while step < longest:
        reach = np.flatnonzero(position - step >= run_start)
        product[reach] = product[reach] * product[reach - step]
        step *= 2
    exclusive = np.ones(n)
    later = np.flatnonzero(position > run_start)
    exclusive[later] = product[later - 1]
    return exclusive
