"""How many more verdicts an interval needs to reach a target precision.

A standard error shrinks like ``1/sqrt(n)`` in the number of judged draws, so an interval of
half-width ``h`` after ``n`` verdicts reaches ``h*`` after about ``n · (h/h*)²``. This
extrapolation assumes the verdicts to come look like those so far; like Eppo's progress bar
it is optimistic early on, when ``h`` itself is uncertain.
"""

from __future__ import annotations

import math


def judgements_to_target(*, half_width: float, judgements: int, target_half_width: float) -> float:
    """Further verdicts expected to bring an interval's half-width down to the target.

    ``0`` when it is already there; ``nan`` when there is nothing to extrapolate from
    (no verdict yet, or an undefined interval).

    >>> judgements_to_target(half_width=0.04, judgements=500, target_half_width=0.02)
    1500.0
    >>> judgements_to_target(half_width=0.01, judgements=500, target_half_width=0.02)
    0.0
    """
    if not target_half_width > 0:
        raise ValueError(f"target_half_width must be positive, got {target_half_width!r}")
    if judgements < 0:
        raise ValueError(f"judgements must be non-negative, got {judgements!r}")
    if judgements == 0 or not math.isfinite(half_width):
        return math.nan
    if half_width <= target_half_width:
        return 0.0
    return float(math.ceil(judgements * (half_width / target_half_width) ** 2 - judgements))
