"""A stable argsort for integer codes in O(N) passes of numpy's vectorised sort."""

from __future__ import annotations

import numpy as np

_DIGIT = 16


def stable_argsort_codes(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Stable argsort of non-negative integer codes below ``n_codes``.

    Codes of up to 16 bits: numpy's radix sort of 16-bit keys. Wider codes: each row's position
    is packed below a digit of its code into one int64, which numpy's (SIMD) sort orders several
    times faster than an argsort; distinct packed values make every pass stable, and one or two
    passes cover codes up to 2**(126 - 2·log2(N)).

    >>> stable_argsort_codes(np.array([70000, 3, 70000, 1, 3]), 70001).tolist()
    [3, 1, 4, 0, 2]
    """
    if n_codes <= 1 << _DIGIT:
        # Casting to uint16 keeps the low 16 bits of a non-negative code.
        return np.argsort(codes.astype(np.uint16), kind="stable")
    row_bits = max(int(len(codes) - 1).bit_length(), 1)
    key_bits = int(n_codes - 1).bit_length()
    digit = 63 - row_bits
    rows = np.arange(len(codes), dtype=np.int64)
    order = None
    shift = 0
    while shift < key_bits:
        width = min(digit, key_bits - shift)
        part = (codes if order is None else codes[order]).astype(np.int64)
        if shift:
            part >>= shift
        if shift + width < key_bits:
            part &= (1 << width) - 1
        part <<= row_bits
        part |= rows
        part.sort()
        part &= (1 << row_bits) - 1
        order = part if order is None else order[part]
        shift += width
    return order
