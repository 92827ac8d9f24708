"""The estimates of one set of draws: every metric a scheme supports, with intervals, sequences and unsure ranges."""

from __future__ import annotations

from statistics import NormalDist

from ..results import QualityEstimates
from .draws import Draws
from .estimator import Estimator
from .schemes import scheme_estimates
from .unsure import with_unsure_bounds

ESTIMATED_METRICS: tuple[str, ...] = (
    "GoodSplitDistance",
    "BadSplitDistance",
    "GoodMergeDistance",
    "BadMergeDistance",
    "GoodDistance",
    "BadDistance",
    "GoodMinusBadDistance",
    "AffectedGoodIndex",
    "AffectedBadIndex",
    "DeltaPrecision",
    "GoodSplitRate",
    "BadSplitRate",
    "GoodMergeRate",
    "BadMergeRate",
)


_PRECISION_METRICS = ("DeltaPrecision", "GoodSplitRate", "BadSplitRate", "GoodMergeRate", "BadMergeRate")


def metrics_for_scheme(scheme: str) -> tuple[str, ...]:
    """Names of the metrics a sampling scheme estimates, in report order."""
    return _PRECISION_METRICS if scheme == "precision" else ESTIMATED_METRICS


def quality_of_draws(draws: Draws, scheme: str, confidence: float, horizon: int) -> QualityEstimates:
    """:func:`estimate_quality` of draws already built (the derived metrics reuse them)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    estimator = Estimator(draws, z, confidence, horizon)
    estimates = scheme_estimates(estimator, scheme)
    estimates = with_unsure_bounds(estimates, estimator, scheme)
    return QualityEstimates(
        scheme=scheme, confidence=confidence, estimates={name: estimates[name] for name in metrics_for_scheme(scheme)}
    )
