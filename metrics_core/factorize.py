"""Integer codes for labels and keys: the factorisation every grouping of metrics_core goes through.

Integers spanning few values an item are factorised by direct indexing (a ``bincount`` and a
gather); other integers and text by Arrow's hash table; object arrays of mixed types, the last
resort, by pandas. Codes are numbered in order of first appearance for hashed labels, in label
order for dense ones; missing labels are an error that names the input.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import DTypeLike

from ._validation import as_1d, is_arrow
from .group_sums import group_counts

# Integer labels spanning at most this many values per item are factorised by
# direct indexing (one bincount), which is several times faster than hashing.
_DENSE_RANGE_PER_ITEM = 4


def code_dtype(n_codes: int) -> type:
    """The smallest integer type for the codes of ``n_codes`` things (indices, never multiplied)."""
    return np.int32 if n_codes < 2**31 else np.int64


def factorize_labels(name: str, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes 0..K-1 for ``labels`` and the label of each code.

    Missing labels (None, NaN, null) are an error naming ``name``.
    """
    return _factorize(name, labels)


def factorize_counted(name: str, labels: Any, dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_factorize`, and the number of items of each code (int64)."""
    if is_arrow(labels):
        codes, uniques = _factorize_arrow(name, labels, dtype)
    else:
        array = as_1d(name, labels)
        dense = _factorize_dense(array, dtype)
        if dense is not None:
            return dense
        codes, uniques = _factorize_hashed(name, array, dtype)
    return codes, uniques, group_counts(codes, len(uniques))


def _factorize(name: str, labels: Any, dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray]:
    if is_arrow(labels):
        return _factorize_arrow(name, labels, dtype)
    array = as_1d(name, labels)
    dense = _factorize_dense(array, dtype)
    return _factorize_hashed(name, array, dtype) if dense is None else dense[:2]


def _factorize_dense(array: np.ndarray, dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Integers spanning few values an item, by direct indexing: (codes, labels, counts); else None."""
    if array.dtype.kind not in "iu" or not len(array):
        return None
    low, high = int(array.min()), int(array.max())
    if high - low >= _DENSE_RANGE_PER_ITEM * len(array) + 1024:
        return None
    keys = array.astype(np.int64, copy=False)
    keys = keys - low if low else keys
    codes, present, counts = factorize_keys_counted(keys, high - low + 1, dtype=dtype)
    return codes, present + low if low else present, counts


def _factorize_hashed(name: str, array: np.ndarray, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    if array.dtype.kind in "iuUSO":
        # Arrow's hash table factorises integers and strings faster than pandas'.
        try:
            return _factorize_arrow(name, pa.array(array, from_pandas=True), dtype)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            pass  # mixed types in an object array
    import pandas as pd  # the last resort, for object arrays of mixed types: not imported otherwise

    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    _reject_missing(name, codes)
    return codes.astype(dtype, copy=False), np.asarray(uniques)


def _factorize_arrow(name: str, labels: Any, dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(labels, pa.ChunkedArray):
        labels = labels.combine_chunks()
    if labels.null_count:
        _reject_missing(name, np.where(labels.is_null().to_numpy(zero_copy_only=False), -1, 0))
    encoded = labels.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    return codes, encoded.dictionary.to_numpy(zero_copy_only=False)


def factorize_keys(keys: np.ndarray, key_range: int, dtype: DTypeLike = np.int64) -> tuple[np.ndarray, np.ndarray]:
    """Factorise non-negative int64 keys; returns (codes of ``dtype``, the key of each code)."""
    codes, present, _ = factorize_keys_counted(keys, key_range, dtype)
    return codes, present


def factorize_keys_counted(
    keys: np.ndarray, key_range: int, dtype: DTypeLike = np.int64
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`factorize_keys`, and the number of keys of each code (int64)."""
    if key_range <= _DENSE_RANGE_PER_ITEM * len(keys) + 1024:
        counts = np.bincount(keys, minlength=key_range)
        present = counts > 0
        remap = np.cumsum(present, dtype=dtype)
        remap -= 1
        return np.take(remap, keys), np.flatnonzero(present), counts[present]
    encoded = pa.array(keys).dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    return codes, encoded.dictionary.to_numpy(zero_copy_only=False), group_counts(codes, len(encoded.dictionary))


def _reject_missing(name: str, codes: np.ndarray) -> None:
    missing = codes < 0
    if missing.any():
        k = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{name}[{k}] is missing: every item needs a cluster label")
