"""The absolute quality of one clustering C (MQM §5.1): Base = C, Exp = the all-singletons clustering."""

from __future__ import annotations

from ..results import Estimate

ABSOLUTE_METRICS: tuple[str, ...] = ("Precision", "RecallAboveMinimum")


def mirrored(offset: float, estimate: Estimate) -> Estimate:
    """``offset − estimate``: the interval flips, the standard error stays."""
    return Estimate(
        value=offset - estimate.value,
        stderr=estimate.stderr,
        ci_low=offset - estimate.ci_high,
        ci_high=offset - estimate.ci_low,
        judged_draws=estimate.judged_draws,
        drawn_draws=estimate.drawn_draws,
    )


def absolute_quality(*, delta_precision: Estimate, delta_recall: Estimate | None = None) -> dict[str, Estimate]:
    """Precision(C) and how far Recall(C) is above MinimumRecall, from the experiment C → singletons.

    ``Precision`` = 1 − ΔPrecision(T) (eq 87); ``RecallAboveMinimum`` = Recall(C) −
    MinimumRecall = −ΔRecall(T) (eqs 89-90; MinimumRecall, the recall of the singletons,
    is unknown, so only the distance above it is reported). Intervals are mirrored.

    Examples
    --------
    >>> from metrics_core import Estimate
    >>> e = lambda value, low, high, stderr: Estimate(
    ...     value=value, stderr=stderr, ci_low=low, ci_high=high, judged_draws=90, drawn_draws=100)
    >>> q = absolute_quality(delta_precision=e(0.08, 0.06, 0.10, 0.01), delta_recall=e(-0.30, -0.34, -0.25, 0.02))
    >>> [round(x, 2) for x in (q["Precision"].value, q["Precision"].ci_low, q["Precision"].ci_high)]
    [0.92, 0.9, 0.94]
    >>> [round(x, 2) for x in (q["RecallAboveMinimum"].value, q["RecallAboveMinimum"].ci_low)]
    [0.3, 0.25]
    """
    out = {"Precision": mirrored(1.0, delta_precision)}
    if delta_recall is not None:
        out["RecallAboveMinimum"] = mirrored(0.0, delta_recall)
    return out
