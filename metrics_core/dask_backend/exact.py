"""Exact sums of float64 arrays, whatever their order or grouping.

A float sum rounds after every addition, so the same numbers summed partition by partition
give results that depend on the partitioning in the last bits. Here every float64 is split
into integer pieces on a fixed binary grid, the pieces are summed exactly, and the total is
an integer count of ``2**-1126`` (the smallest float64 unit, with room for the mantissa).
Adding such totals is exact and associative; :func:`exact_to_float` rounds once, correctly.
"""

from __future__ import annotations

import numpy as np

# x = M · 2**(e - 53) with |M| < 2**53 an integer and e - 53 >= -1126 for every finite float64.
_GRID = 1126
_LOW_BITS = 27
# Chunks small enough that per-exponent float sums of the pieces are exact integers (< 2**53).
_CHUNK = 1 << 25


def exact_sum(values: np.ndarray) -> int:
    """The exact sum of ``values`` as an integer number of ``2**-1126``.

    Examples
    --------
    >>> values = np.array([1e16, 1.0, -1e16])
    >>> float(values.sum()), exact_to_float(exact_sum(values[:2]) + exact_sum(values[2:]))
    (0.0, 1.0)
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if not np.isfinite(x).all():
        raise ValueError("exact_sum needs finite values")
    total = 0
    for start in range(0, len(x), _CHUNK):
        mantissa, exponent = np.frexp(x[start : start + _CHUNK])
        whole = (mantissa * 2.0**53).astype(np.int64)
        high, low = np.divmod(whole, 1 << _LOW_BITS)
        shift = exponent.astype(np.int64) + (_GRID - 53)
        high_sums = np.bincount(shift, weights=high.astype(np.float64))
        low_sums = np.bincount(shift, weights=low.astype(np.float64))
        for at in np.flatnonzero((high_sums != 0) | (low_sums != 0)).tolist():
            total += ((int(high_sums[at]) << _LOW_BITS) + int(low_sums[at])) << at
    return total


def exact_to_float(total: int) -> float:
    """The float64 nearest to ``total · 2**-1126`` (Python's integer division rounds correctly)."""
    return total / (1 << _GRID)
