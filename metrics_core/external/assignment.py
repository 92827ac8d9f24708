"""The largest total of a one-to-one matching of rows to columns in a sparse square table.

The set-matching accuracies need ``max_σ Σ_i value[i, σ(i)]`` over permutations σ of an
n × n table given by its nonzero cells. scipy's ``linear_sum_assignment`` is not a
dependency of this package, and a dense n × n matrix is out of the question for a
million clusters, so the problem is cut down exactly before any dense work:

1. **Dominant cells.** If ``value[i, j]`` is at least the largest other value of row i
   plus the largest other value of column j, some optimal matching pairs i with j
   (swapping i and j into any optimal matching loses nothing), so the cell is fixed
   and its row and column leave the problem. Repeated until no cell is dominant.
2. **Blocks.** Zero cells cost nothing, so the rest is a maximum-weight matching on the
   bipartite graph of the remaining nonzero cells, which splits into its connected
   components. A component with one row or one column takes its largest cell.
3. **Hungarian method.** Every other component is solved densely by the Hungarian method
   in its shortest-augmenting-path form with row and column potentials, O(rows² · columns),
   its inner loop vectorised over columns. A component too large for that makes the
   result None.
"""

from __future__ import annotations

import numpy as np

from .contingency import group_top_two

# Largest block solved densely: O(rows² · columns) work, Python overhead per step.
MAX_BLOCK_SIDE = 1500
MAX_BLOCK_CELLS = 20_000_000


def max_matching_total(row: np.ndarray, col: np.ndarray, value: np.ndarray, n: int) -> float | None:
    """``max_σ Σ_i value[i, σ(i)]`` for an n × n table whose nonzero cells are given.

    Parameters
    ----------
    row, col : ndarray of int64
        Row and column (both in ``0..n-1``) of each cell; at most one cell per pair.
    value : ndarray of float64
        Non-negative value of each cell; absent cells are 0.
    n : int

    Returns
    -------
    float or None
        The optimum, or None when a block left after the exact reductions is larger
        than ``MAX_BLOCK_SIDE`` rows and columns (or ``MAX_BLOCK_CELLS`` cells).

    Examples
    --------
    Greedy would take 10 and then 0; the optimum is 9 + 9.

    >>> max_matching_total(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([10.0, 9.0, 9.0]), 2)
    18.0
    """
    keep = value > 0
    row, col, value = row[keep], col[keep], value[keep]
    fixed, (row, col, value) = _fix_dominant_cells(row, col, value, n)
    rest = _components_total(row, col, value)
    return None if rest is None else fixed + rest


def _fix_dominant_cells(
    row: np.ndarray, col: np.ndarray, value: np.ndarray, n: int
) -> tuple[float, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Fix dominant cells round after round; returns their total and the remaining cells.

    Rows and columns with no cell left drop out of the codes once the cells are few, so a
    round costs O(remaining cells), not O(n). A row's largest other value is at least 0 (an
    absent cell) whenever two columns remain, and with one row and one column left the only
    cell is dominant anyway, so dropping empty rows and columns changes no decision.
    """
    total = 0.0
    while len(value):
        if len(value) < n // 4:
            row, col, n = _compact(row, col)
        row_arg, _, row_second = group_top_two(row, n, value)
        col_arg, _, col_second = group_top_two(col, n, value)
        cells = np.arange(len(value))
        # One cell per row and column at most: ties for a maximum go to the first cell.
        dominant = (row_arg[row] == cells) & (col_arg[col] == cells) & (value >= row_second[row] + col_second[col])
        if not dominant.any():
            break
        total += float(value[dominant].sum())
        row_done, col_done = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        row_done[row[dominant]] = True
        col_done[col[dominant]] = True
        keep = ~(row_done[row] | col_done[col])
        row, col, value = row[keep], col[keep], value[keep]
    return total, (row, col, value)


def _compact(row: np.ndarray, col: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Rows and columns renumbered over those that have a cell; the larger count."""
    rows, row = np.unique(row, return_inverse=True)
    cols, col = np.unique(col, return_inverse=True)
    return row, col, max(len(rows), len(cols))


def _components_total(row: np.ndarray, col: np.ndarray, value: np.ndarray) -> float | None:
    """The optimum summed over the connected components of the cells' bipartite graph."""
    if len(value) == 0:
        return 0.0
    rows, row = np.unique(row, return_inverse=True)
    cols, col = np.unique(col, return_inverse=True)
    component = _connected_components(row, col + len(rows), len(rows) + len(cols))[row]
    order = np.argsort(component, kind="stable")
    component, row, col, value = component[order], row[order], col[order], value[order]
    starts = np.flatnonzero(np.r_[True, component[1:] != component[:-1]])
    ends = np.r_[starts[1:], len(component)]
    n_rows = _distinct_per_run(component, row, starts)
    n_cols = _distinct_per_run(component, col, starts)
    star = (n_rows == 1) | (n_cols == 1)
    total = float(np.maximum.reduceat(value, starts)[star].sum())
    for start, end in zip(starts[~star], ends[~star]):
        block = _dense_block(row[start:end], col[start:end], value[start:end])
        if block is None:
            return None
        total += _hungarian_max(block)
    return total


def _connected_components(a: np.ndarray, b: np.ndarray, n_nodes: int) -> np.ndarray:
    """Smallest node of each node's component, for the undirected edges ``a[k]–b[k]``."""
    label = np.arange(n_nodes)
    while True:
        low = np.minimum(label[a], label[b])
        np.minimum.at(label, label[a], low)
        np.minimum.at(label, label[b], low)
        while True:  # pointer jumping: every node points at its root
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped
        if np.array_equal(label[a], label[b]):
            return label


def _distinct_per_run(run: np.ndarray, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Number of distinct ``values`` within each run of equal ``run`` codes."""
    pairs = np.unique(np.stack([run, values]), axis=1)
    return np.diff(np.r_[np.searchsorted(pairs[0], run[starts]), pairs.shape[1]])


def _dense_block(row: np.ndarray, col: np.ndarray, value: np.ndarray) -> np.ndarray | None:
    """The component as a dense matrix with no more rows than columns, or None if too large."""
    rows, row = np.unique(row, return_inverse=True)
    cols, col = np.unique(col, return_inverse=True)
    if len(rows) > len(cols):
        rows, cols, row, col = cols, rows, col, row
    if len(rows) > MAX_BLOCK_SIDE or len(rows) * len(cols) > MAX_BLOCK_CELLS:
        return None
    block = np.zeros((len(rows), len(cols)))
    block[row, col] = value
    return block


def _hungarian_max(profit: np.ndarray) -> float:
    """Largest total of a matching of every row to a distinct column (rows <= columns).

    The shortest augmenting path method with potentials ``u``, ``v``: row ``i`` joins,
    columns enter the alternating tree one by one at the smallest reduced cost, and the
    path found is augmented. Column 0 is a sentinel; ``match[j]`` is the 1-based row
    matched to column j (0 for none).
    """
    n, m = profit.shape
    cost = profit.max() - profit
    u, v = np.zeros(n + 1), np.zeros(m + 1)
    match = np.zeros(m + 1, dtype=np.int64)
    way = np.zeros(m + 1, dtype=np.int64)
    for i in range(1, n + 1):
        match[0] = i
        j0 = 0
        min_reduced = np.full(m + 1, np.inf)
        used = np.zeros(m + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = match[j0]
            reduced = cost[i0 - 1] - u[i0] - v[1:]
            free = ~used[1:]
            better = free & (reduced < min_reduced[1:])
            min_reduced[1:][better] = reduced[better]
            way[1:][better] = j0
            candidates = np.where(free, min_reduced[1:], np.inf)
            j1 = int(np.argmin(candidates)) + 1
            delta = candidates[j1 - 1]
            in_tree = np.flatnonzero(used)
            u[match[in_tree]] += delta
            v[in_tree] -= delta
            min_reduced[1:][free] -= delta
            j0 = j1
            if match[j0] == 0:
                break
        while j0:
            previous = way[j0]
            match[j0] = match[previous]
            j0 = previous
    matched = np.flatnonzero(match[1:])
    return float(profit[match[1:][matched] - 1, matched].sum())
