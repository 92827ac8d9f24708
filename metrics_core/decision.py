"""The headline decision of an experiment, read from a confidence sequence (abcde-spec §9, §12).

The owner names the metric that decides (:func:`deciding_metric`: ΔPrecision for the
``precision`` scheme, ``GoodMinusBadDistance`` = GoodDistance − BadDistance for ``jaccard`` and
``stratified``) and an equivalence margin ``δ ≥ 0``. The decision reads the metric's confidence
sequence, which stays valid however often the dashboard is looked at:

* ``better`` when the sequence lies above ``δ``, ``worse`` when it lies below ``−δ``;
* ``no_meaningful_difference`` when it lies inside ``[−δ, δ]`` (only possible for ``δ > 0``);
* ``not_enough_data`` otherwise, and whenever the sequence is undefined.

Both deciding metrics are higher-is-better (positive favours Exp). A decision is *fragile*
when deciding the *unsure* verdicts could change it: the same sequence, centred on the ends of
the estimate's unsure range, gives another outcome (§12). A fragile decision also says how it
would change (``flip_*``): the end of the unsure range that changes it, the outcome then, and
which end of the moved sequence crosses which threshold (``margin`` or ``−margin``), so that a
page can say so without redoing the arithmetic.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from .results import Estimate, FlatResult, QualityEstimates

DECISIONS: tuple[str, ...] = ("better", "worse", "no_meaningful_difference", "not_enough_data")


def deciding_metric(scheme: str) -> str:
    """The default deciding metric of a sampling scheme.

    >>> deciding_metric("precision"), deciding_metric("jaccard")
    ('DeltaPrecision', 'GoodMinusBadDistance')
    """
    return "DeltaPrecision" if scheme == "precision" else "GoodMinusBadDistance"


@dataclass(frozen=True, kw_only=True)
class Decision(FlatResult):
    """The outcome of :func:`decide` and what it rests on.

    ``settle_half_width`` is the sequence half-width at which today's value would settle a
    decision, ``| |value| − margin |`` (``nan`` without a value; ``0`` when the value sits on
    the margin, which no finite amount of data settles).

    When ``fragile``: ``flip_centre`` is the end of the unsure range (``unsure_low`` or
    ``unsure_high`` of the estimate) on which the sequence gives ``flip_outcome``; ``flip_bound``
    (``"cs_low"`` or ``"cs_high"``) is the end of that moved sequence that crosses
    ``flip_threshold`` (``margin`` or ``−margin``), and ``flip_bound_value`` where it lies then.
    Not fragile: ``flip_outcome`` and ``flip_bound`` are ``""`` and the numbers ``nan``. When
    both ends of the unsure range change the outcome, the lower one is reported.
    """

    outcome: str
    metric: str
    value: float
    cs_low: float
    cs_high: float
    margin: float
    fragile: bool
    settle_half_width: float
    flip_outcome: str = ""
    flip_centre: float = math.nan
    flip_bound: str = ""
    flip_bound_value: float = math.nan
    flip_threshold: float = math.nan


def decide(estimates: QualityEstimates, *, metric: str | None = None, margin: float = 0.0) -> Decision:
    """Better, worse, no meaningful difference or not enough data yet (abcde-spec §9).

    Parameters
    ----------
    estimates : QualityEstimates
        From :func:`metrics_core.estimate_quality`.
    metric : str, optional
        The deciding metric, higher-is-better; default :func:`deciding_metric` of the scheme.
    margin : float
        The equivalence margin ``δ ≥ 0``, in the metric's units.

    Examples
    --------
    >>> from metrics_core import Estimate, QualityEstimates
    >>> e = Estimate(value=0.05, stderr=0.01, ci_low=0.03, ci_high=0.07, judged_draws=500, drawn_draws=600,
    ...              cs_low=0.02, cs_high=0.08, unsure_low=0.01, unsure_high=0.06)
    >>> q = QualityEstimates(scheme="precision", confidence=0.95, estimates={"DeltaPrecision": e})
    >>> d = decide(q)
    >>> d.outcome, d.fragile, d.settle_half_width
    ('better', True, 0.05)
    >>> decide(q, margin=0.1).outcome
    'no_meaningful_difference'
    """
    metric = deciding_metric(estimates.scheme) if metric is None else metric
    if metric not in estimates:
        raise ValueError(f"metric {metric!r} is not among the estimates ({', '.join(estimates.estimates)})")
    margin = float(margin)
    if not (margin >= 0 and math.isfinite(margin)):
        raise ValueError(f"margin must be a non-negative number, got {margin!r}")
    e: Estimate = estimates[metric]
    outcome = _outcome(e.cs_low, e.cs_high, margin)
    settle = abs(abs(e.value) - margin) if math.isfinite(e.value) else math.nan
    steady = Decision(
        outcome=outcome,
        metric=metric,
        value=e.value,
        cs_low=e.cs_low,
        cs_high=e.cs_high,
        margin=margin,
        fragile=False,
        settle_half_width=settle,
    )
    below, above = e.value - e.cs_low, e.cs_high - e.value
    for centre in (e.unsure_low, e.unsure_high):
        if not math.isfinite(centre + below + above):
            continue
        low, high = centre - below, centre + above
        flipped = _outcome(low, high, margin)
        if flipped != outcome:
            bound, value, threshold = _crossing((e.cs_low, e.cs_high), (low, high), margin)
            return dataclasses.replace(
                steady,
                fragile=True,
                flip_outcome=flipped,
                flip_centre=centre,
                flip_bound=bound,
                flip_bound_value=value,
                flip_threshold=threshold,
            )
    return steady


def _crossing(before: tuple[float, float], after: tuple[float, float], margin: float) -> tuple[str, float, float]:
    """The end of the sequence (``cs_low`` or ``cs_high``) that moves across a threshold of the
    rule, with where it lies after the move and the threshold: the lower end against ``margin``
    (better) and ``−margin`` (no meaningful difference), the upper end against ``−margin``
    (worse) and ``margin`` (no meaningful difference)."""
    checks = (
        ("cs_low", 0, margin, lambda x: x > margin),
        ("cs_high", 1, -margin, lambda x: x < -margin),
        ("cs_low", 0, -margin, lambda x: x >= -margin),
        ("cs_high", 1, margin, lambda x: x <= margin),
    )
    for name, end, threshold, holds in checks:
        if holds(before[end]) != holds(after[end]):
            return name, after[end], threshold
    return "", math.nan, math.nan


def _outcome(low: float, high: float, margin: float) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "not_enough_data"
    if low > margin:
        return "better"
    if high < -margin:
        return "worse"
    if margin > 0 and -margin <= low and high <= margin:
        return "no_meaningful_difference"
    return "not_enough_data"
