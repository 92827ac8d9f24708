"""The metrics of each sampling scheme from an :class:`Estimator`, and sums of estimates."""

from __future__ import annotations

import math

from ..masses import INTERSECTION, MERGE, SELF, SPLIT
from ..results import Estimate
from ..sampling import ALL, DIFF, STABLE
from .estimator import Estimator, Mean, MeanOf

STRATUM_OF = {
    "jaccard": {c: ALL for c in range(4)},
    "stratified": {SPLIT: DIFF, MERGE: DIFF, SELF: STABLE, INTERSECTION: STABLE},
    "precision": {c: ALL for c in range(4)},
}


def scheme_estimates(est: Estimator, scheme: str) -> dict[str, Estimate]:
    if scheme == "precision":
        return _precision_scheme(est)
    return _jaccard_schemes(est, STRATUM_OF[scheme])


def _jaccard_schemes(est: Estimator, stratum_of: dict[int, int]) -> dict[str, Estimate]:
    d = est.d
    p = "share"
    total = lambda c: float(d.totals[stratum_of[c], c])  # noqa: E731
    # Every mean in one call: their SEs' dot products then run together (Estimator.means).
    # Self pairs are known, not judged (spec §14): the index is their exact total plus the
    # intersection pairs' total times the intersection's own share, with that share's interval.
    split, merge, intersection, *precision, split_rate, merge_rate = est.means(
        MeanOf(stratum_of[SPLIT], (SPLIT,), p),
        MeanOf(stratum_of[MERGE], (MERGE,), p),
        MeanOf(stratum_of[INTERSECTION], (INTERSECTION,), p),
        *precision_means_of(stratum_of),
        MeanOf(stratum_of[SPLIT], (SPLIT,), p, importance="base"),
        MeanOf(stratum_of[MERGE], (MERGE,), p, importance="exp"),
    )
    out = {
        "GoodSplitDistance": est.indicator(total(SPLIT), split, complement=True),
        "BadSplitDistance": est.indicator(total(SPLIT), split),
        "GoodMergeDistance": est.indicator(total(MERGE), merge),
        "BadMergeDistance": est.indicator(total(MERGE), merge, complement=True),
        "AffectedGoodIndex": est.indicator(total(INTERSECTION), intersection, offset=total(SELF)),
        "AffectedBadIndex": est.indicator(total(INTERSECTION), intersection, complement=True),
    }
    out["GoodDistance"] = _sum(out["GoodSplitDistance"], out["GoodMergeDistance"])
    out["BadDistance"] = _sum(out["BadSplitDistance"], out["BadMergeDistance"])
    # Good and Bad of one class are one share and its complement: their difference is
    # multiplier × (1 − 2·share), with twice the share's SE, interval and sequence.
    out["GoodMinusBadDistance"] = _sum(
        _difference(out["GoodSplitDistance"], out["BadSplitDistance"]),
        _difference(out["GoodMergeDistance"], out["BadMergeDistance"]),
    )
    out["DeltaPrecision"] = est.normal(precision_parts(est, stratum_of, precision))
    out["GoodSplitRate"] = est.indicator(d.split_rate, split_rate, complement=True)
    out["BadSplitRate"] = est.indicator(d.split_rate, split_rate)
    out["GoodMergeRate"] = est.indicator(d.merge_rate, merge_rate)
    out["BadMergeRate"] = est.indicator(d.merge_rate, merge_rate, complement=True)
    return out


def delta_precision(est: Estimator, stratum_of: dict[int, int]) -> Estimate:
    """ΔPrecision: each stratum's mean of ``l_ij · 1(i≡j)`` times its exact total, summed."""
    return est.normal(precision_parts(est, stratum_of, est.means(*precision_means_of(stratum_of))))


def precision_means_of(stratum_of: dict[int, int]) -> list[MeanOf]:
    """Each stratum's mean of ``l_ij · 1(i≡j)``, by stratum: the means of ΔPrecision."""
    strata = sorted(set(stratum_of.values()))
    return [MeanOf(s, tuple(c for c in range(4) if stratum_of[c] == s), "precision") for s in strata]


def precision_parts(est: Estimator, stratum_of: dict[int, int], means: list[Mean]) -> list[tuple[float, Mean]]:
    """Each stratum's exact total with its mean of :func:`precision_means_of`: the parts of ΔPrecision."""
    strata = sorted(set(stratum_of.values()))
    return [(float(est.d.totals[s].sum()), mean) for s, mean in zip(strata, means, strict=True)]


def _precision_scheme(est: Estimator) -> dict[str, Estimate]:
    d = est.d
    p = "share"
    stratum_of = STRATUM_OF["precision"]
    split, merge, *precision = est.means(
        MeanOf(ALL, (SPLIT,), p), MeanOf(ALL, (MERGE,), p), *precision_means_of(stratum_of)
    )
    return {
        "DeltaPrecision": est.normal(precision_parts(est, stratum_of, precision)),
        "GoodSplitRate": est.indicator(d.split_rate, split, complement=True),
        "BadSplitRate": est.indicator(d.split_rate, split),
        "GoodMergeRate": est.indicator(d.merge_rate, merge),
        "BadMergeRate": est.indicator(d.merge_rate, merge, complement=True),
    }


def _sum(first: Estimate, second: Estimate) -> Estimate:
    """Sum of two independent estimates: SEs in quadrature, interval and sequence by MOVER."""
    value = first.value + second.value
    ci_low, ci_high = _mover(value, first, second, "ci_low", "ci_high")
    cs_low, cs_high = _mover(value, first, second, "cs_low", "cs_high")
    return Estimate(
        value=value,
        stderr=math.hypot(first.stderr, second.stderr),
        ci_low=ci_low,
        ci_high=ci_high,
        judged_draws=first.judged_draws + second.judged_draws,
        drawn_draws=first.drawn_draws + second.drawn_draws,
        cs_low=cs_low,
        cs_high=cs_high,
    )


def _mover(value: float, first: Estimate, second: Estimate, low: str, high: str) -> tuple[float, float]:
    """Bounds of a sum of independent estimates from their bounds (MOVER, Zou & Donner 2008)."""
    (l1, h1), (l2, h2) = (getattr(first, low), getattr(first, high)), (getattr(second, low), getattr(second, high))
    if math.isnan(value):
        return l1 + l2, h1 + h2
    return (
        value - math.hypot(first.value - l1, second.value - l2),
        value + math.hypot(h1 - first.value, h2 - second.value),
    )


def _difference(good: Estimate, bad: Estimate) -> Estimate:
    """``good − bad`` of one class, whose shares are complements: every bound comes from the other's."""
    return Estimate(
        value=good.value - bad.value,
        stderr=good.stderr + bad.stderr,
        ci_low=good.ci_low - bad.ci_high,
        ci_high=good.ci_high - bad.ci_low,
        judged_draws=good.judged_draws,
        drawn_draws=good.drawn_draws,
        cs_low=good.cs_low - bad.cs_high,
        cs_high=good.cs_high - bad.cs_low,
    )
