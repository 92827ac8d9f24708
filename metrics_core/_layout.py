"""Sorted layouts of the affected items and cells, for drawing partners in O(log N).

Every set a partner is drawn from is a contiguous segment of a sorted array minus
at most one element:
  * items grouped by cell: the items of a cell; the cell minus the vantage item;
  * cells grouped by Base cluster: the cells of Base(i) minus i's own cell (split);
  * cells grouped by Exp cluster: the cells of Exp(i) minus i's own cell (merge).
A weighted draw from a segment is a binary search in a cumulative weight array.
Only affected items are laid out: every partner of an affected item is affected.
"""

from __future__ import annotations

import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ._sorting import stable_argsort_codes
from .population import Population


@dataclass(frozen=True)
class Segments:
    """Elements sorted by group, with cumulative weights and per-group bounds."""

    order: np.ndarray  # position -> element; ascending within each group
    cumulative: np.ndarray  # len(order) + 1
    start: np.ndarray  # group -> first position
    end: np.ndarray  # group -> one past the last position

    @classmethod
    def build(cls, elements: np.ndarray, group: np.ndarray, n_groups: int, weight: np.ndarray) -> Segments:
        """Lay out ascending ``elements`` by ``group`` (a stable sort keeps them ascending)."""
        order = elements[stable_argsort_codes(group, n_groups)]
        counts = np.bincount(group, minlength=n_groups)
        end = np.cumsum(counts)
        cumulative = np.empty(len(order) + 1)
        cumulative[0] = 0.0
        np.cumsum(weight[order], out=cumulative[1:])
        return cls(order=order, cumulative=cumulative, start=end - counts, end=end)

    def locate(self, group: np.ndarray, element: np.ndarray) -> np.ndarray:
        """Position of each ``element`` within its ``group``: a binary search in the segment."""
        lo, hi = self.start[group].copy(), self.end[group].copy()
        while True:
            active = lo < hi
            if not active.any():
                return lo
            mid = (lo + hi) // 2
            right = active & (self.order[np.minimum(mid, len(self.order) - 1)] < element)
            lo = np.where(right, mid + 1, lo)
            hi = np.where(active & ~right, mid, hi)

    def draw(self, lo: np.ndarray, hi: np.ndarray, skip: np.ndarray | None, u: np.ndarray) -> np.ndarray:
        """Elements drawn ∝ weight from positions [lo, hi), minus position ``skip`` if given."""
        cum = self.cumulative
        if skip is None:
            skip_lo = skip_hi = lo
        else:
            skip_lo, skip_hi = skip, skip + 1
        excluded = cum[skip_hi] - cum[skip_lo]
        target = cum[lo] + u * (cum[hi] - cum[lo] - excluded)
        shifted = target >= cum[skip_lo]
        target = np.where(shifted, target + excluded, target)
        pos = np.clip(np.searchsorted(cum, target, side="right") - 1, lo, hi - 1)
        # Rounding can land on the skipped element: step off it to the side it came from.
        inside = (pos >= skip_lo) & (pos < skip_hi)
        pos = np.where(inside & shifted & (skip_hi < hi), skip_hi, np.where(inside, skip_lo - 1, pos))
        return self.order[pos]


@dataclass(frozen=True)
class Layout:
    cells: np.ndarray  # affected cell codes, ascending
    items_by_cell: Segments
    cells_by_base: Segments
    cells_by_exp: Segments


_CACHE: weakref.WeakKeyDictionary[Population, Layout] = weakref.WeakKeyDictionary()


def layout_of(population: Population) -> Layout:
    """The layout of a population, built once and cached while the population lives."""
    if population not in _CACHE:
        _CACHE[population] = _build(population)
    return _CACHE[population]


def _build(pop: Population) -> Layout:
    n_cells = len(pop.cell_weight)
    affected_cell = pop.cell_affected()
    cells = np.flatnonzero(affected_cell)
    items = np.flatnonzero(affected_cell[pop.cell])
    jobs = (
        (items, pop.cell[items], n_cells, pop.weight),
        (cells, pop.cell_base[cells], len(pop.base_labels), pop.cell_weight),
        (cells, pop.cell_exp[cells], len(pop.exp_labels), pop.cell_weight),
    )
    # numpy releases the GIL in sorts, gathers and cumsums: two threads use both cores.
    with ThreadPoolExecutor(max_workers=2) as pool:
        items_by_cell, cells_by_base, cells_by_exp = pool.map(lambda job: Segments.build(*job), jobs)
    return Layout(cells, items_by_cell, cells_by_base, cells_by_exp)
