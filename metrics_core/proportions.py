"""Intervals for a proportion."""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson_interval(share: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score interval of a proportion ``share`` observed on (effective) size ``n`` > 0.

    >>> [round(x, 4) for x in wilson_interval(0.8, 10, 1.959964)]
    [0.4902, 0.9433]
    """
    denominator = 1.0 + z * z / n
    centre = (share + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(max(share * (1 - share), 0.0) / n + z * z / (4 * n * n))
    # At share 0 (or 1) the bound is 0 (or 1) exactly, not a rounding step away.
    low = 0.0 if share <= 0.0 else max(centre - half, 0.0)
    high = 1.0 if share >= 1.0 else min(centre + half, 1.0)
    return low, high


def proportion_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Two-sided Wilson interval of ``successes / trials`` at ``confidence``; ``None`` without trials."""
    if trials <= 0:
        return None
    return wilson_interval(successes / trials, trials, NormalDist().inv_cdf(0.5 + confidence / 2))
