"""Argument checks shared by the public functions: each error names the argument."""

from __future__ import annotations

import math
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


def positive_weights(name: str, weights: Any, n: int) -> np.ndarray:
    """Float64 weights, all finite and > 0; ``None`` means all 1.0."""
    if weights is None:
        return np.ones(n, dtype=np.float64)
    array = as_1d(name, weights)
    if len(array) != n:
        raise ValueError(f"{name} has {len(array)} values, expected {n}")
    try:
        array = array.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    bad = ~(np.isfinite(array) & (array > 0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{k}] = {float(array[k])!r}: weights must be positive finite numbers")
    return array


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
