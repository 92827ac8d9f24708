"""How to read an estimate: which direction of a metric is good, and what its interval says.

Conventions (abcde-spec §6): ``Good*`` metrics, ``AffectedGoodIndex`` and ``DeltaPrecision``
are higher-is-better; ``Bad*`` metrics and ``AffectedBadIndex`` lower-is-better. An interval
that excludes zero is a finding (Optimizely's "significant"); one that contains zero is
inconclusive.
"""

from __future__ import annotations

import math

from .results import Estimate

HIGHER_IS_BETTER, LOWER_IS_BETTER = 1, -1
READINGS: tuple[str, ...] = ("good", "bad", "inconclusive", "no_data")


def metric_direction(name: str) -> int:
    """``+1`` when a larger value of the metric favours Exp, ``-1`` when a smaller one does.

    >>> metric_direction("GoodMergeDistance"), metric_direction("BadSplitRate"), metric_direction("DeltaPrecision")
    (1, -1, 1)
    """
    if name.startswith("Bad") or name == "AffectedBadIndex":
        return LOWER_IS_BETTER
    if name.startswith(("Good", "Delta")) or name in ("AffectedGoodIndex", "IQ"):
        return HIGHER_IS_BETTER
    raise ValueError(f"metric {name!r} has no known direction")


def interval_reading(estimate: Estimate, *, direction: int) -> str:
    """``good`` or ``bad`` when the interval excludes zero on that side, else ``inconclusive``.

    ``no_data`` when nothing was judged yet (the value is undefined).

    >>> from metrics_core import Estimate
    >>> e = lambda value, low, high: Estimate(
    ...     value=value, stderr=0.005, ci_low=low, ci_high=high, judged_draws=90, drawn_draws=100)
    >>> interval_reading(e(0.02, 0.01, 0.03), direction=1)
    'good'
    >>> interval_reading(e(0.02, 0.01, 0.03), direction=-1)
    'bad'
    >>> interval_reading(e(0.01, -0.01, 0.03), direction=1)
    'inconclusive'
    """
    if direction not in (HIGHER_IS_BETTER, LOWER_IS_BETTER):
        raise ValueError(f"direction must be 1 or -1, got {direction!r}")
    if math.isnan(estimate.value) or math.isnan(estimate.ci_low) or math.isnan(estimate.ci_high):
        return "no_data"
    side = 1 if estimate.ci_low > 0 else -1 if estimate.ci_high < 0 else 0
    if side == 0:
        return "inconclusive"
    return "good" if side == direction else "bad"
