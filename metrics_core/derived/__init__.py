"""Derived metrics of MQM: ΔRecall and IQ from the expected-affected-item diagram, with bootstrap intervals.

Conventions: ``DeltaRecall`` > 0 means Exp has more recall than Base (it is a
difference of weight shares, in [-1, 1]); ``IQ`` in [-1, 1] is higher-is-better
(1: every step of the diff brings Exp closer to the Ideal clustering; 0: neutral;
-1: every step takes it further away).

Both are approximations, not estimates of a sampled quantity: MQM §3.2 builds one
Venn diagram for a "typical" affected item from the ABCDE rates and ΔPrecision of
the affected items (:mod:`.diagram`) and reads Recall and the JaccardDistances to
Ideal from it; the result depends on the parameter ``Recall_Base(AffectedItems)``
(and ``Precision_Base`` for Variant 2). The intervals (abcde-spec §7, ours) are
bootstrap percentile intervals of that approximation over the sampling of the pairs
(:mod:`.bootstrap`): they cover the value the approximation converges to with many
verdicts, not the true ΔRecall, and say nothing about the approximation's own error.

Resampling (ours): by default the bootstrap resamples the draws of each stratum as the
sample was drawn, judged or not, so that the number of draws of each class varies as it
does between real samples. Resampling only the judged draws within each class (spec §7's
wording, ``resampling="class"``) holds the class counts fixed and misses that variation
(the ``jaccard`` ΔPrecision is not post-stratified). Measured coverage of 95% intervals
(1000 samples of 2000 draws with 5-30% unsure verdicts, the population of
``test_estimation_simulation``): ΔRecall/IQ 0.93/0.92 (``jaccard``), 0.94/0.92
(``stratified``), 0.91/0.92 (``precision``); by class 0.92/0.91, 0.93/0.91, 0.89/0.90. In that
population Variant 1 divides by SplitRate − MergeRate = −0.067 and 8-24% of the estimates
clip at eq 56; on one with SplitRate − MergeRate = −0.15, ΔRecall covered 0.945-0.95 and IQ
0.92 (0.93-0.94 without unsure verdicts). Bias-corrected and basic intervals did worse.

Over a Recall_Base range (abcde-spec §14; :mod:`.ranges`): the interval reported is the union of
the intervals over the owner's range of ``Recall_Base`` (default 40-80%), and the sequence and
unsure bounds are propagated from the inputs' through the same equations. On random changes whose
true Recall_Base lay in the range (tests/metrics_core/test_derived_range.py) it covered the
diagram's limit at the true Recall_Base in 98% (ΔRecall) and 94% (IQ) of them, and the true ΔRecall
in 89% (65% at the 60%/80% rule alone; IQ 60% and 34%): the rest is the diagram's own approximation error.
"""

from .absolute import ABSOLUTE_METRICS, absolute_quality
from .calibration import calibration_against_gold, recall_base_matching
from .diagram import (
    AffectedItemDiagram,
    RecallBaseCurve,
    RecallPrecisionHeatMap,
    affected_item_diagram,
    affected_item_diagram_from_metrics,
)
from .metrics import DERIVED_METRICS, DerivedMetrics, RangeEstimate, derived_metrics

__all__ = [
    "ABSOLUTE_METRICS",
    "absolute_quality",
    "calibration_against_gold",
    "recall_base_matching",
    "DERIVED_METRICS",
    "AffectedItemDiagram",
    "DerivedMetrics",
    "RangeEstimate",
    "RecallBaseCurve",
    "RecallPrecisionHeatMap",
    "affected_item_diagram",
    "affected_item_diagram_from_metrics",
    "derived_metrics",
]
