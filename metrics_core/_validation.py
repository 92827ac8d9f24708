"""Argument checks shared by the public functions: each error names the argument.

Weights of extreme magnitude. Every metric depends on the weights only through ratios: a pair
weighs w_i·w_j / (W·weight(U)), an item w_i/W, a draw's probability is a product of such shares
(abcde-spec §2, §5). The ratios do not change when every weight is multiplied by one factor, and
multiplying a float64 by a power of two is exact (the exponent moves, the significand does not)
as long as the result stays a normal number. So weights whose magnitude alone would underflow or
overflow those products (six items of 1e-320, of 1e-200 or of 1e300 each) are *rescaled exactly*
(:func:`weight_rescaling`): the population multiplies them by the power of two that brings the
largest into [0.5, 1), and every metric is that of the same ratios at ordinary magnitude (to the
last bit or two: 1.0 and 0.7 are rounded differently). Weights are taken as the float64 values
given: a subnormal value is exact once stored (its decimal text was rounded when read, as every
number's is).

Rescaling cannot help weights that *span* too wide a range: the pair of the two lightest items then
weighs less than float64 holds at any scale (1e308 among ones: about 1e-616 of the heaviest pair),
so its draws and terms would silently vanish. Such weights are *refused*, naming the item (the row,
in a file): they may span at most a factor 2**200 (about 1.6e60), which keeps every product of two
shares a normal number for populations up to 2**60 items. Refusing every extreme magnitude instead
would turn away inputs whose every ratio float64 holds exactly; so rescaling where it is exact,
refusal only where no scale works.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np


def as_1d(name: str, values: Any) -> np.ndarray:
    """Return ``values`` as a 1-d numpy array, or raise naming ``name``."""
    if hasattr(values, "to_numpy") and not isinstance(values, np.ndarray):
        values = values.to_numpy(zero_copy_only=False) if is_arrow(values) else values.to_numpy()
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    return array


def is_arrow(values: Any) -> bool:
    return type(values).__module__.startswith("pyarrow")


def same_length(**arrays: np.ndarray) -> int:
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"arrays must have the same length: {described}")
    return next(iter(lengths.values()))


# Weights may span at most a factor 2**WEIGHT_SPAN_EXPONENT (module docstring); weights within
# [2**-WEIGHT_SPAN_EXPONENT, 2**WEIGHT_SPAN_EXPONENT] are used as given, others rescaled.
WEIGHT_SPAN_EXPONENT = 200
WEIGHT_SPAN_TEXT = "2**200 (about 1.6e60)"
WEIGHT_SPAN_WHY = "the pair weights would underflow float64 at any scale"


def positive_weights(name: str, weights: Any, n: int) -> np.ndarray:
    """Float64 weights, all finite and > 0, spanning at most 2**200; ``None`` means all 1.0.

    Returned as given; :func:`weight_rescaling` says by which power of two to multiply them.
    """
    if weights is None:
        return np.ones(n, dtype=np.float64)
    array = as_1d(name, weights)
    if len(array) != n:
        raise ValueError(f"{name} has {len(array)} values, expected {n}")
    try:
        array = array.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    # Two reductions with no N-sized mask: a NaN makes both comparisons false.
    if not (array.min(initial=np.inf) > 0 and array.max(initial=0.0) < np.inf):
        k = int(np.flatnonzero(~(np.isfinite(array) & (array > 0)))[0])
        raise ValueError(f"{name}[{k}] = {float(array[k])!r}: weights must be positive finite numbers")
    with np.errstate(over="ignore"):
        total = array.sum()
    if not np.isfinite(total):
        raise ValueError(f"{name} add up to more than a float64 holds: scale them down")
    span = weight_span_problem(array)
    if span is not None:
        k, other, heavier = span
        blamed, named = f"{name}[{k}] = {float(array[k])!r}", f"{name}[{other}] = {float(array[other])!r}"
        raise ValueError(weight_span_message(blamed, named, heavier=heavier))
    return array


def weight_span_problem(weights: np.ndarray) -> tuple[int, int, bool] | None:
    """``None`` when positive finite ``weights`` span at most 2**WEIGHT_SPAN_EXPONENT. Else the
    position of the extreme weight to blame (the one farther from the median in magnitude), the
    position of the opposite extreme, and whether the blamed one is the heavier."""
    if len(weights) == 0:
        return None
    heavier = weight_span_blame(weights.min(), weights.max(), median=lambda: np.median(weights))
    if heavier is None:
        return None
    low, high = int(np.argmin(weights)), int(np.argmax(weights))
    return (high, low, True) if heavier else (low, high, False)


def weight_span_blame(lightest: float, heaviest: float, *, median: Callable[[], float]) -> bool | None:
    """The rule of :func:`weight_span_problem` on the extremes of positive finite weights, for
    readers that never hold them all (the Dask backend): ``None`` when ``heaviest`` is at most
    2**WEIGHT_SPAN_EXPONENT times ``lightest``, else whether to blame the heaviest (True) or the
    lightest (False), the one farther from the median in magnitude. ``median()`` returns the
    weights' median (``numpy.median``'s); it is only called past the span."""
    e_low, e_high = (int(e) for e in np.frexp(np.array([lightest, heaviest], dtype=np.float64))[1])
    if e_high - e_low <= WEIGHT_SPAN_EXPONENT:
        return None
    middle = int(np.frexp(median())[1])
    return e_high - middle >= middle - e_low


def weight_span_message(blamed: str, other: str, *, heavier: bool) -> str:
    """The problem of a weight too far from another, each described by the caller."""
    if heavier:
        return f"{blamed} is more than {WEIGHT_SPAN_TEXT} times {other}: {WEIGHT_SPAN_WHY}"
    return f"{blamed} is less than {other} divided by {WEIGHT_SPAN_TEXT}: {WEIGHT_SPAN_WHY}"


def weight_rescaling(weights: np.ndarray) -> int:
    """The power of two to multiply checked ``weights`` by: 0 (none) when all lie within
    [2**-WEIGHT_SPAN_EXPONENT, 2**WEIGHT_SPAN_EXPONENT], else the one that brings the largest
    into [0.5, 1). Exact, and every ratio is kept (module docstring)."""
    if len(weights) == 0:
        return 0
    return weight_range_rescaling(weights.min(), weights.max())


def weight_range_rescaling(lightest: float, heaviest: float) -> int:
    """:func:`weight_rescaling` of checked weights from ``lightest`` to ``heaviest`` (for readers
    that never hold them all: the Dask backend)."""
    e_low, e_high = (int(e) for e in np.frexp(np.array([lightest, heaviest], dtype=np.float64))[1])
    if e_low > -WEIGHT_SPAN_EXPONENT and e_high <= WEIGHT_SPAN_EXPONENT:
        return 0
    return -e_high


def positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def open_unit_interval(name: str, value: Any) -> float:
    if not isinstance(value, (int, float, np.floating)) or not (0.0 < float(value) < 1.0) or math.isnan(value):
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")
    return float(value)


def one_of(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def generator(name: str, rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{name} must be a numpy.random.Generator, e.g. np.random.default_rng(seed)")
    return rng
