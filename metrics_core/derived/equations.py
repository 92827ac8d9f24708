"""The expected-affected-item diagram of MQM §3.2, and ΔRecall and IQ read from it (MQM §3.2-3.3, §4.2).

Every area is a weight in units of ``weight(B) = 1``. The computation is written once,
on numpy arrays that broadcast (:func:`diagram_arrays`), so that one diagram, a curve
over ``Recall_Base``, a heat map over ``(Precision_Base, Recall_Base)`` and a thousand
bootstrap replicates are the same code.

Choices where the paper leaves room (ours):

* ``SplitRate(AffectedItems)`` and ``MergeRate(AffectedItems)`` are the sums of the Good
  and Bad rates (exactly the impact metrics for ABCDE's estimates), so that the split
  and merge areas of the diagram add up.
* Variant 1 applies when ``precision_base`` is not given; it needs ``SplitRate ≠
  MergeRate`` (relative tolerance 1e-9, since equal rates computed along two float
  paths differ by rounding). Without it and without ``precision_base`` the diagram is
  undefined (NaN) rather than built on a made-up ``Precision_Base``.
* After the clips of eqs 56 and 60 the diagram's own ``Recall_Base`` and
  ``Precision_Base`` can differ from the parameters; eqs 63-64 subtract the diagram's
  own values, so that ΔRecall and ΔPrecision stay differences within one diagram
  (equal to the parameters whenever nothing was clipped).
* A clip is reported when a value leaves its range by more than 1e-12 (rounding at a
  bound is not a clip).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

# MQM §3.3: assume Recall_Base(AffectedItems) = 60% for a recall-positive change, else 80%.
RECALL_BASE_IF_RECALL_POSITIVE = 0.6
RECALL_BASE_OTHERWISE = 0.8
DEFAULT_GRID = np.round(np.arange(1, 21) * 0.05, 2)  # 0.05, 0.10, ..., 1.00

_EQUAL_RATES_RTOL = 1e-9
_CLIP_TOLERANCE = 1e-12


def diagram_arrays(
    *,
    affected_weight_fraction: Any,
    good_split_rate: Any,
    bad_split_rate: Any,
    good_merge_rate: Any,
    bad_merge_rate: Any,
    delta_precision: Any,
    weight_fraction_of_base_cluster: Any,
    jaccard_distance: Any,
    recall_base: Any = None,
    precision_base: Any = None,
) -> dict[str, np.ndarray]:
    """Every quantity of the diagram as broadcast numpy arrays (no validation).

    ``recall_base=None`` applies the 60%/80% rule of MQM §3.3 element by element;
    ``precision_base=None`` selects Variant 1 (eq 51), a value Variant 2 (eq 55).
    """
    f = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731
    awf = f(affected_weight_fraction)
    with np.errstate(divide="ignore", invalid="ignore"):
        # eqs 35-40: the metrics of the affected items.
        good_split = f(good_split_rate) / awf
        bad_split = f(bad_split_rate) / awf
        good_merge = f(good_merge_rate) / awf
        bad_merge = f(bad_merge_rate) / awf
        delta_precision_affected = f(delta_precision) / awf
        split_rate, merge_rate = good_split + bad_split, good_merge + bad_merge
        wfbc = f(weight_fraction_of_base_cluster)
        base = 1.0
        stable = base * (1.0 - split_rate)  # eq 42
        exp = base * (1.0 - split_rate) + merge_rate * base * (1.0 - split_rate) / (1.0 - merge_rate)  # eq 43
        good_split_w = good_split * base  # eq 44
        bad_split_w = bad_split * base  # eq 45
        good_merge_w = good_merge * exp  # eq 46
        bad_merge_w = bad_merge * exp  # eq 47
        min_good_stable = wfbc * base  # eq 50
        rates_differ = np.abs(split_rate - merge_rate) > _EQUAL_RATES_RTOL * np.maximum(split_rate, merge_rate)
        if precision_base is None:
            numerator = delta_precision_affected - good_merge + bad_split
            gsw = numerator * (1.0 - split_rate) * base / (split_rate - merge_rate)  # eq 51
            gsw = np.where(rates_differ, gsw, np.nan)  # eq 51 needs SplitRate != MergeRate
            precision_base = np.full_like(gsw, np.nan)
        else:
            precision_base = f(precision_base)
            gsw = base * (precision_base - bad_split)  # eq 55
        good_stable = np.minimum(np.maximum(gsw, min_good_stable), stable)  # eq 56
        bad_stable = stable - good_stable  # eq 57
        recall_positive = good_merge_w > bad_split_w
        if recall_base is None:
            recall_base = np.where(recall_positive, RECALL_BASE_IF_RECALL_POSITIVE, RECALL_BASE_OTHERWISE)
        recall_base = f(recall_base)
        kept = bad_split_w + good_stable  # Base(i) ∩ Ideal(i)
        recall_base_max = kept / (kept + good_merge_w)  # eq 58
        missing = kept / recall_base - kept - good_merge_w  # eq 59
        missing_w = np.maximum(missing, 0.0)  # eq 60
        recall_base_diagram = kept / (kept + good_merge_w + missing_w)
        recall_exp = (good_stable + good_merge_w) / (good_stable + good_merge_w + bad_split_w + missing_w)  # eq 61
        precision_base_diagram = kept / base  # eq 28 on the diagram
        precision_exp = (good_stable + good_merge_w) / exp  # eq 62
        delta_recall_affected = recall_exp - recall_base_diagram  # eq 63
        delta_precision_diagram = precision_exp - precision_base_diagram  # eq 64
        jd_base_ideal = (1.0 - kept / (base + good_merge_w + missing_w)) * awf  # eqs 79, 81
        jd_exp_ideal = (1.0 - (good_stable + good_merge_w) / (exp + bad_split_w + missing_w)) * awf  # eqs 80, 82
        improvement = jd_base_ideal - jd_exp_ideal  # eq 83
        jd = f(jaccard_distance)
        iq_unclipped = improvement / jd  # eq 77
        return {
            "AffectedWeightFraction": awf,
            "GoodSplitRate": good_split,
            "BadSplitRate": bad_split,
            "GoodMergeRate": good_merge,
            "BadMergeRate": bad_merge,
            "SplitRate": split_rate,
            "MergeRate": merge_rate,
            "DeltaPrecisionInput": delta_precision_affected,
            "WeightFractionOfBaseCluster": wfbc,
            "RatesDiffer": rates_differ,
            "RecallPositive": recall_positive,
            "BaseWeight": np.full_like(stable, base),
            "StableWeight": stable,
            "ExpWeight": exp,
            "GoodSplitWeight": good_split_w,
            "BadSplitWeight": bad_split_w,
            "GoodMergeWeight": good_merge_w,
            "BadMergeWeight": bad_merge_w,
            "MinGoodStableWeight": min_good_stable,
            "GSW": gsw,
            "GoodStableWeight": good_stable,
            "BadStableWeight": bad_stable,
            "Missing": missing,
            "MissingWeight": missing_w,
            "RecallBase": recall_base,
            "RecallBaseMax": recall_base_max,
            "PrecisionBase": precision_base,
            "PrecisionBaseMin": (min_good_stable + bad_split_w) / base,  # eq 52
            "PrecisionBaseMax": 1.0 - good_split,  # eq 53
            "RecallBaseDiagram": recall_base_diagram,
            "RecallExp": recall_exp,
            "PrecisionBaseDiagram": precision_base_diagram,
            "PrecisionExp": precision_exp,
            "DeltaRecallAffected": delta_recall_affected,
            "DeltaPrecisionAffected": delta_precision_diagram,
            "DeltaRecall": delta_recall_affected * awf,  # eq 65
            "DeltaPrecision": delta_precision_diagram * awf,  # eq 66
            "JaccardDistanceBaseIdeal": jd_base_ideal,
            "JaccardDistanceExpIdeal": jd_exp_ideal,
            "JaccardDistanceToIdealImprovement": improvement,
            "JaccardDistance": jd,
            "JaccardDistanceDiagram": (1.0 - stable / (base + exp - stable)) * awf,  # eq 67
            "IQUnclipped": iq_unclipped,
            "IQ": np.clip(iq_unclipped, -1.0, 1.0),
        }


def clip_side(value: Any, low: Any, high: Any) -> np.ndarray:
    """``"min"`` where ``value`` is below ``low`` beyond rounding, ``"max"`` above ``high``, else ``""``."""
    value, low, high = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (value, low, high)))
    return np.where(value < low - _CLIP_TOLERANCE, "min", np.where(value > high + _CLIP_TOLERANCE, "max", ""))


def valid_parameters(a: Mapping[str, np.ndarray], variant: int) -> np.ndarray:
    """Where the parameters make sense without any clip (eqs 52-53, 56, 58; Variant 1 applicable)."""
    t = _CLIP_TOLERANCE
    ok = (clip_side(a["GSW"], a["MinGoodStableWeight"], a["StableWeight"]) == "") & ~np.isnan(a["GSW"])
    ok = ok & (a["RecallBase"] > 0) & (a["RecallBase"] <= a["RecallBaseMax"] + t)
    if variant == 2:
        ok = ok & (a["PrecisionBase"] >= a["PrecisionBaseMin"] - t) & (a["PrecisionBase"] <= a["PrecisionBaseMax"] + t)
    return ok
