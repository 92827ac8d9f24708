"""Per-group counts and sums over the items' int32 codes, with no N-sized temporary.

``np.bincount`` copies int32 codes into an N-sized intp array first (8 bytes an item), and a sum
of squares makes another N-sized array: at 30M items a quarter of the impact's working state.
These walk the items in blocks. The sums add each group's values in item order, as
``np.bincount`` does, so they equal its sums exactly (bit for bit); counts are integers, exact
in any order.
"""

from __future__ import annotations

import numpy as np

# Blocks of 64Ki items: a block's temporaries (512 KiB) stay below the 1 MiB from which the
# command line's allocator maps fresh, zeroed pages (``metrics_core.cli.lean_allocation``).
BLOCK = 1 << 16


def group_counts(codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Number of items of each group (int64): ``np.bincount(codes, minlength=n_groups)``.

    >>> group_counts(np.array([2, 0, 2], dtype=np.int32), 4).tolist()
    [1, 0, 2, 0]
    """
    counts = np.zeros(n_groups, dtype=np.int64)
    for start in range(0, len(codes), BLOCK):
        np.add.at(counts, codes[start : start + BLOCK], 1)
    return counts


def group_sums(codes: np.ndarray, values: np.ndarray, n_groups: int, *, squared: bool = False) -> np.ndarray:
    """Sum of ``values`` (of their squares if ``squared``) over the items of each group (float64),
    equal bit for bit to ``np.bincount(codes, weights=values, minlength=n_groups)``.

    >>> group_sums(np.array([1, 0, 1], dtype=np.int32), np.array([0.5, 2.0, 3.0]), 2, squared=True).tolist()
    [4.0, 9.25]
    """
    sums = np.zeros(n_groups, dtype=np.float64)
    for start in range(0, len(codes), BLOCK):
        block = values[start : start + BLOCK]
        np.add.at(sums, codes[start : start + BLOCK], block * block if squared else block)
    return sums
