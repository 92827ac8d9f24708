"""The expected situation of an affected item (JDD §7.2; the Venn diagram of JDD and MQM Figure 1).

For a "typical" affected item ``i``, every area of the diagram is a share of
``weight(Base(i) ∪ Exp(i))``: the split part (in Base(i) only), the stable part (in both)
and the merge part (in Exp(i) only) are exact; each is divided into the items truly
equivalent to ``i`` and the rest by the six quality estimates of the affected items
(JDD §7.2: the distances and indices of ``AffectedItems`` are those of ``T`` divided by
``AffectedWeightFraction``, MQM eqs 35-40 for the same step on rates). The six shares add
up to 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .results import Estimate, QualityEstimates, json_number

# Left to right on the diagram's line: split part, stable part, merge part; within each,
# the items equivalent to i first.
SITUATION_PARTS: tuple[tuple[str, str, bool], ...] = (
    # (metric, part of Base ∪ Exp, equivalent to i)
    ("BadSplitDistance", "split", True),
    ("GoodSplitDistance", "split", False),
    ("AffectedGoodIndex", "stable", True),
    ("AffectedBadIndex", "stable", False),
    ("GoodMergeDistance", "merge", True),
    ("BadMergeDistance", "merge", False),
)


@dataclass(frozen=True)
class AffectedItemSituation:
    """Exact shares ``split + stable + merge = 1`` and the estimated share of each quality area."""

    split: float
    stable: float
    merge: float
    parts: dict[str, Estimate]

    def as_dict(self) -> dict:
        shares = {name: json_number(getattr(self, name)) for name in ("split", "stable", "merge")}
        return {
            **shares,
            "parts": {
                name: {**self.parts[name].as_dict(), "part": part, "equivalent": equivalent}
                for name, part, equivalent in SITUATION_PARTS
            },
        }


def affected_item_situation(estimates: QualityEstimates, *, exact: dict[str, float]) -> AffectedItemSituation | None:
    """The expected situation of an affected item, or ``None`` when it cannot be drawn.

    Parameters
    ----------
    estimates : QualityEstimates
        From a ``jaccard`` or ``stratified`` sample (the ``precision`` scheme does not
        estimate the distances: ``None``).
    exact : mapping
        The exact impact metrics (``ImpactMetrics.metrics``): ``AffectedWeightFraction``,
        ``SplitDistance``, ``MergeDistance`` and ``AffectedJaccardIndex``. ``None`` when no
        item is affected.

    Examples
    --------
    >>> from metrics_core import Estimate, QualityEstimates
    >>> e = lambda v: Estimate(value=v, stderr=0.0, ci_low=v, ci_high=v, judged_draws=10, drawn_draws=10)
    >>> q = QualityEstimates(scheme="jaccard", confidence=0.95, estimates={
    ...     "GoodSplitDistance": e(0.05), "BadSplitDistance": e(0.05),
    ...     "AffectedGoodIndex": e(0.15), "AffectedBadIndex": e(0.05),
    ...     "GoodMergeDistance": e(0.1), "BadMergeDistance": e(0.1)})
    >>> s = affected_item_situation(q, exact={"AffectedWeightFraction": 0.5, "SplitDistance": 0.1,
    ...     "MergeDistance": 0.2, "AffectedJaccardIndex": 0.2})
    >>> s.split, s.stable, s.merge, round(s.parts["AffectedGoodIndex"].value, 12)
    (0.2, 0.4, 0.4, 0.3)
    """
    if any(name not in estimates for name, _, _ in SITUATION_PARTS):
        return None
    fraction = exact.get("AffectedWeightFraction")
    if fraction is None or not math.isfinite(fraction) or fraction <= 0:
        return None
    factor = 1.0 / fraction
    return AffectedItemSituation(
        split=exact["SplitDistance"] * factor,
        stable=exact["AffectedJaccardIndex"] * factor,
        merge=exact["MergeDistance"] * factor,
        parts={name: estimates[name].scaled(factor) for name, _, _ in SITUATION_PARTS},
    )
