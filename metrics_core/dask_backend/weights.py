"""Weights on Dask, checked and rescaled as the in-memory reader does them
(:meth:`metrics_core.io.source.TableSource.weights`, :mod:`metrics_core._validation`) though the
driver never holds them: each partition reports its extremes, the driver applies the same rule to
them and names the item as that reader does."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from fsspec.core import url_to_fs

from .._validation import weight_range_rescaling, weight_span_blame, weight_span_message
from ..io import InputError
from ..io.errors import place_text
from .exact import exact_sum, exact_to_float


@dataclass(frozen=True)
class WeightSource:
    """Where the items come from, to name a place in them."""

    path: Any
    storage_options: dict | None

    @property
    def name(self) -> str:
        return str(self.path)

    @cached_property
    def one_file(self) -> bool:
        """One Parquet file (its rows are the dataset's, in order), not a folder, glob or list of files."""
        if not isinstance(self.path, (str, os.PathLike)):
            return False
        try:
            fs, location = url_to_fs(str(self.path), **(self.storage_options or {}))
            return bool(fs.isfile(location))
        except Exception:  # noqa: BLE001 - an unknown place is named by item_id, which always works
            return False

    def error(self, problem: str, at: _Weight) -> InputError:
        """``problem`` of the weight ``at``: on its row in one file, else of its item."""
        if self.one_file:
            return InputError(self.path, problem, row=at.row)
        return InputError(self.path, f"item_id {at.item_id!r}: {problem}")

    def place(self, at: _Weight) -> str:
        """Where the weight ``at`` is, after "the weight ...": on its row, or of its item."""
        return f"on {place_text(at.row, None)}" if self.one_file else f"of item_id {at.item_id!r}"


@dataclass(frozen=True)
class _Weight:
    """One weight: its value, row (in its partition; in the dataset once placed), text and item."""

    value: float
    row: int
    text: str
    item_id: Any

    def moved(self, start: int) -> _Weight:
        return _Weight(self.value, self.row + start, self.text, self.item_id)


@dataclass(frozen=True)
class _WeightPart:
    """What one partition's weights tell the driver: rows, the first bad weight, the extremes."""

    rows: int
    null: _Weight | None  # the first missing weight (null, or NaN: Dask reads both as NaN)
    bad: tuple[_Weight, str] | None  # the first weight not positive and finite, and its problem
    lightest: _Weight | None  # the first of the lightest weights
    heaviest: _Weight | None  # the first of the heaviest
    total: int  # exact_sum of the weights


SUMMARY_META = pd.DataFrame({"summary": pd.Series([], dtype=object)})


def weight_summary(part: pd.DataFrame) -> pd.DataFrame:
    """The partition's :class:`_WeightPart`, as a one-row frame."""
    return pd.DataFrame({"summary": pd.Series([_weight_part(part)], dtype=object)})


def _weight_part(part: pd.DataFrame) -> _WeightPart:
    weight = _as_float(part)

    def at(row: int) -> _Weight:
        value = part["weight"].iloc[row]  # quoted as the in-memory reader quotes a Parquet value: 0, 2.0, 1e-310
        text = repr(value.item() if hasattr(value, "item") else value)
        item_id = part["item_id"].iloc[row]
        return _Weight(float(weight[row]), row, text, item_id.item() if hasattr(item_id, "item") else item_id)

    null = np.isnan(weight)
    bad = ~(np.isfinite(weight) & (weight > 0)) & ~null
    if null.any() or bad.any():
        first_null = at(int(np.argmax(null))) if null.any() else None
        first_bad = None
        if bad.any():
            row = int(np.argmax(bad))
            problem = "is not finite" if not np.isfinite(weight[row]) else "must be greater than 0"
            first_bad = (at(row), problem)
        return _WeightPart(len(weight), first_null, first_bad, None, None, 0)
    if len(weight) == 0:
        return _WeightPart(0, None, None, None, None, 0)
    return _WeightPart(
        len(weight), None, None, at(int(np.argmin(weight))), at(int(np.argmax(weight))), exact_sum(weight)
    )


def _placed(weight: _Weight | None, start: int) -> _Weight:
    """A partition's lightest or heaviest weight, placed in the dataset."""
    assert weight is not None, "a partition with rows and no missing or bad weight has its extremes"
    return weight.moved(start)


def checked_weights(source: WeightSource, given: dd.DataFrame, parts: list[_WeightPart]) -> int:
    """Refuse the weights as the in-memory reader does (the first missing weight, else the first
    not positive and finite, a total past float64, a span past 2**200); else the power of two to
    rescale them by."""
    starts = np.concatenate(([0], np.cumsum([part.rows for part in parts]))).tolist()
    for part, start in zip(parts, starts):
        if part.null is not None:
            raise source.error("missing weight (null)", part.null.moved(start))
    for part, start in zip(parts, starts):
        if part.bad is not None:
            weight, problem = part.bad
            raise source.error(f"weight {weight.text} {problem}", weight.moved(start))
    kept = [(part, start) for part, start in zip(parts, starts) if part.rows]
    if not kept:
        return 0
    try:
        total = exact_to_float(sum(part.total for part, _ in kept))
    except OverflowError:
        total = np.inf
    if not np.isfinite(total):
        raise InputError(source.name, "the weights add up to more than a float64 holds: scale them down")
    # The first row of the lightest and of the heaviest weight, as numpy's argmin/argmax find them.
    lightest = min((_placed(part.lightest, start) for part, start in kept), key=lambda w: (w.value, w.row))
    heaviest = min((_placed(part.heaviest, start) for part, start in kept), key=lambda w: (-w.value, w.row))
    heavier = weight_span_blame(lightest.value, heaviest.value, median=lambda: _median(given, starts[-1]))
    if heavier is not None:
        blamed, other = (heaviest, lightest) if heavier else (lightest, heaviest)
        named = f"the weight {other.text} {source.place(other)}"
        raise source.error(weight_span_message(f"weight {blamed.text}", named, heavier=heavier), blamed)
    return weight_range_rescaling(lightest.value, heaviest.value)


def weight_exponent(frame: dd.DataFrame, given: dd.DataFrame | None) -> int:
    """The rescaling of weights not checked (``validate=False``): from their extremes alone."""
    if given is None:
        return 0
    lightest, heaviest = dask.compute(frame["weight"].min(), frame["weight"].max())
    if not (np.isfinite(lightest) and np.isfinite(heaviest) and lightest > 0):
        return 0  # unchecked garbage: left as it is
    return weight_range_rescaling(lightest, heaviest)


def _median(given: dd.DataFrame, n: int) -> float:
    """``numpy.median`` of the checked weights, exactly, in two small passes: the binary exponents
    of the middle order statistics (a histogram of exponents), then, if they differ, the two
    middle values themselves (the largest weight of the lower exponent, the smallest of the upper)."""
    parts = given.to_delayed()
    counts = sum(dask.compute(*(dask.delayed(_exponent_counts)(part) for part in parts)))
    cumulative = np.cumsum(counts)
    lower, upper = (int(np.searchsorted(cumulative, k, side="right")) for k in ((n - 1) // 2, n // 2))
    if lower == upper:
        return float(np.ldexp(0.5, lower - _EXPONENT_OFFSET))  # only its exponent matters
    ends = dask.compute(*(dask.delayed(_bin_ends)(part, lower, upper) for part in parts))
    below = max(end[0] for end in ends if end[0] is not None)
    above = min(end[1] for end in ends if end[1] is not None)
    return float(np.median(np.array([below, above])))


# frexp exponents of positive finite float64 run from -1073 (5e-324) to 1024.
_EXPONENT_OFFSET = 1074
_EXPONENT_BINS = _EXPONENT_OFFSET + 1025


def _exponent_counts(part: pd.DataFrame) -> np.ndarray:
    exponent = np.frexp(_as_float(part))[1].astype(np.int64) + _EXPONENT_OFFSET
    return np.bincount(exponent, minlength=_EXPONENT_BINS)


def _bin_ends(part: pd.DataFrame, lower: int, upper: int) -> tuple[float | None, float | None]:
    weight = _as_float(part)
    exponent = np.frexp(weight)[1].astype(np.int64) + _EXPONENT_OFFSET
    below, above = weight[exponent == lower], weight[exponent == upper]
    return (float(below.max()) if len(below) else None, float(above.min()) if len(above) else None)


def _as_float(part: pd.DataFrame) -> np.ndarray:
    return part["weight"].to_numpy(dtype=np.float64, na_value=np.nan)
