"""The absolute quality of one clustering C (MQM §5.1): Base = C, Exp = the all-singletons clustering."""

from __future__ import annotations

from ..results import Estimate

ABSOLUTE_METRICS: tuple[str, ...] = ("Precision", "RecallAboveMinimum")


def mirrored(offset: float, estimate: Estimate) -> Estimate:
    """``offset − estimate``: the interval flips, the standard error stays."""
    return Estimate(
        offset - estimate.value,
        estimate.stderr,
        offset - estimate.ci_high,
        offset - estimate.ci_low,
        estimate.judged_draws,
        estimate.drawn_draws,
    )


def absolute_quality(*, delta_precision: Estimate, delta_recall: Estimate | None = None) -> dict[str, Estimate]:
    """Precision(C) and how far Recall(C) is above MinimumRecall, from the experiment C → singletons.

    ``Precision`` = 1 − ΔPrecision(T) (eq 87); ``RecallAboveMinimum`` = Recall(C) −
    MinimumRecall = −ΔRecall(T) (eqs 89-90; MinimumRecall, the recall of the singletons,
    is unknown, so only the distance above it is reported). Intervals are mirrored.

    Examples
    --------
    >>> from metrics_core import Estimate
    >>> q = absolute_quality(delta_precision=Estimate(0.08, 0.01, 0.06, 0.10, 90, 100),
    ...     delta_recall=Estimate(-0.30, 0.02, -0.34, -0.25, 90, 100))
    >>> [round(x, 2) for x in (q["Precision"].value, q["Precision"].ci_low, q["Precision"].ci_high)]
    [0.92, 0.9, 0.94]
    >>> [round(x, 2) for x in (q["RecallAboveMinimum"].value, q["RecallAboveMinimum"].ci_low)]
    [0.3, 0.25]
    """
    out = {"Precision": mirrored(1.0, delta_precision)}
    if delta_recall is not None:
        out["RecallAboveMinimum"] = mirrored(0.0, delta_recall)
    return out
