"""Verdicts, raters and units as integer codes: the shared input handling of the rater statistics."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .._validation import as_1d, same_length
from ..factorize import factorize_keys, factorize_labels
from ..judgements import VERDICTS, verdict_codes_of
from .coefficients import Q


def verdict_codes(name: str, verdict: Any) -> np.ndarray:
    """Verdict codes 0..2; string arrays are compared in C rather than looked up one by one."""
    array = as_1d(name, verdict)
    if array.dtype.kind in "UO" and len(array):
        codes = np.full(len(array), -1, dtype=np.int8)
        for code, label in enumerate(VERDICTS):
            codes[array == label] = code
        if (codes >= 0).all():
            return codes
    try:
        return verdict_codes_of(array)
    except ValueError as exc:
        raise ValueError(str(exc).replace("verdict[", f"{name}[", 1)) from None


def label_codes(name: str, values: Any) -> tuple[np.ndarray, np.ndarray]:
    array = as_1d(name, values)
    if array.dtype.kind in "fO" and len(array):
        missing = _missing(array)
        if missing.any():
            k = int(np.flatnonzero(missing)[0])
            raise ValueError(f"{name}[{k}] is missing: every verdict needs a {name}")
    if len(array) == 0:
        return np.zeros(0, dtype=np.int64), array
    return factorize_labels(name, array)


def _missing(array: np.ndarray) -> np.ndarray:
    """Where ``array`` (floats or objects) holds a missing value (None, NaN, pandas' NA)."""
    if array.dtype.kind == "f":
        return np.isnan(array)
    if "pandas" not in sys.modules:
        # No pandas object (NA, NaT) can exist: None and the NaNs (unequal to themselves) are all.
        return np.asarray((array == None) | (array != array), dtype=bool)  # noqa: E711 (elementwise)
    import pandas as pd  # imported here: it costs 0.2 s at start-up, kept out of the command line

    return pd.isna(array)


def rater_verdict_codes(unit: Any, verdict: Any, rater: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Unit codes, verdict codes, and rater codes in label order with the rater labels, of verdicts
    given one per rater and unit (checked: as long as each other, no rater twice on a unit)."""
    unit_codes, _ = label_codes("unit", unit)
    codes = verdict_codes("verdict", verdict)
    rater_codes, rater_labels = label_codes("rater", rater)
    same_length(unit=unit_codes, verdict=codes, rater=rater_codes)
    reject_repeated_raters(unit_codes, rater_codes)
    rater_codes, rater_labels = sorted_codes(rater_codes, rater_labels)
    return unit_codes, codes, rater_codes, rater_labels


def sorted_codes(codes: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Recode so that code order is label order, when the labels can be sorted."""
    try:
        order = np.argsort(labels, kind="stable")
    except TypeError:  # labels of mixed types: keep first-seen order
        return codes, labels
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes], labels[order]


def category_counts(unit_codes: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``counts[u, k]``: verdicts in category ``k`` on unit ``u`` (units × 3, int64)."""
    n_units = int(unit_codes.max()) + 1 if len(unit_codes) else 0
    flat = np.bincount(unit_codes * Q + codes, minlength=n_units * Q)
    return flat.reshape(n_units, Q)


def reject_repeated_raters(unit_codes: np.ndarray, rater_codes: np.ndarray) -> None:
    if len(unit_codes) < 2:
        return
    n_raters = int(rater_codes.max()) + 1
    keys = unit_codes * n_raters + rater_codes
    _, distinct = factorize_keys(keys, (int(unit_codes.max()) + 1) * n_raters)
    if len(distinct) == len(keys):
        return
    order = np.argsort(keys, kind="stable")
    k = int(np.flatnonzero(keys[order][1:] == keys[order][:-1])[0])
    first, again = sorted((int(order[k]), int(order[k + 1])))
    raise ValueError(
        f"rows {first} and {again} are two verdicts of the same rater on the same unit; "
        "agreement needs one verdict per rater and unit"
    )


def pairs_within_units(unit_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row indices ``(first, second)`` of every two rows of the same unit, each pair once."""
    order = np.argsort(unit_codes)
    sizes = np.bincount(unit_codes) if len(unit_codes) else np.zeros(0, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    position = np.arange(len(order)) - starts[unit_codes[order]]
    later = sizes[unit_codes[order]] - 1 - position
    total = int(later.sum())
    first = np.repeat(np.arange(len(order)), later)
    offset = np.arange(total) - np.repeat(np.cumsum(later) - later, later) + 1
    return order[first], order[first + offset]
