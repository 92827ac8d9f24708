"""ΔRecall and IQ with bootstrap intervals from a judged sample (MQM §3-4; abcde-spec §7)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._validation import generator, open_unit_interval, positive_int
from ..context import SampleContext, exact_metrics
from ..estimation import Draws, quality_of_draws
from ..judgements import PairVerdicts
from ..population import Population
from ..results import Estimate, QualityEstimates
from ..sampling import PairSample
from .bootstrap import RESAMPLING, replicate_inputs
from .diagram import (
    AffectedItemDiagram,
    RecallBaseCurve,
    RecallPrecisionHeatMap,
    affected_item_diagram_from_metrics,
    unit_parameter,
)
from .equations import diagram_arrays
from .ranges import DEFAULT_RECALL_BASE_RANGE, percentile_union, propagated_extremes, recall_base_grid

DERIVED_METRICS: tuple[str, ...] = ("DeltaRecall", "IQ")


@dataclass(frozen=True, kw_only=True)
class RangeEstimate(Estimate):
    """An :class:`Estimate` of ΔRecall or IQ with the ``Recall_Base(AffectedItems)`` range it assumes.

    ``recall_base_low == recall_base_high`` when one value was given (a ground truth's).
    """

    recall_base_low: float = math.nan
    recall_base_high: float = math.nan


@dataclass(frozen=True)
class DerivedMetrics:
    """ΔRecall(T) and IQ with bootstrap intervals, and the diagram they come from.

    ``estimates`` maps ``DeltaRecall`` and ``IQ`` to :class:`RangeEstimate`: the value read
    from the diagram of the point estimates; the union of the bootstrap percentile intervals
    over the ``Recall_Base`` range (widened to contain the value if it does not); the
    bootstrap standard deviation at the value's ``Recall_Base`` as ``stderr``; the sequence
    and unsure bounds propagated from the inputs' (:mod:`.ranges`); the range assumed; and
    the judged and drawn draws of the sample. ``undefined_replicates`` counts the replicates
    with no value at the value's ``Recall_Base`` (a class left without judged draws).
    """

    scheme: str
    confidence: float
    n_boot: int
    estimates: Mapping[str, Estimate]
    diagram: AffectedItemDiagram
    curve: RecallBaseCurve
    heat_map: RecallPrecisionHeatMap
    undefined_replicates: Mapping[str, int]
    resampling: str

    def __getitem__(self, name: str) -> Estimate:
        return self.estimates[name]

    def __contains__(self, name: str) -> bool:
        return name in self.estimates

    def details_dict(self) -> dict:
        """Everything but the estimates, JSON-ready (the CLI's ``derived`` object)."""
        diagram = self.diagram.as_dict()
        return {
            "variant": diagram["variant"],
            "recall_base": diagram["recall_base"],
            "recall_base_rule": diagram["recall_base_rule"],
            "precision_base": diagram["precision_base"],
            "bootstrap": {
                "n_boot": self.n_boot,
                "resampling": self.resampling,
                "undefined_replicates": dict(self.undefined_replicates),
            },
            "diagram": diagram,
            "curve": self.curve.as_dict(),
            "heat_map": self.heat_map.as_dict(),
        }

    def as_dict(self) -> dict:
        return {
            "scheme": self.scheme,
            "confidence": self.confidence,
            "estimates": {name: e.as_dict() for name, e in self.estimates.items()},
            **self.details_dict(),
        }


def derived_metrics(
    population: Population | SampleContext,
    sample: PairSample,
    verdicts: PairVerdicts,
    *,
    rng: np.random.Generator,
    confidence: float = 0.95,
    recall_base: float | None = None,
    recall_base_range: tuple[float, float] = DEFAULT_RECALL_BASE_RANGE,
    precision_base: float | None = None,
    n_boot: int = 1000,
    recall_grid: Any = None,
    precision_grid: Any = None,
    resampling: str = "stratum",
    labelled_draws: Any = None,
    draws: Draws | None = None,
    quality: QualityEstimates | None = None,
    exact: Mapping[str, float] | None = None,
) -> DerivedMetrics:
    """ΔRecall(T) (MQM §3.2) and IQ (MQM §4.2) of a judged sample, with bootstrap intervals.

    Parameters
    ----------
    population : Population or SampleContext
        As for :func:`~metrics_core.estimate_quality`.
    sample : PairSample
        Any scheme: ``jaccard``, ``stratified`` and ``precision`` all estimate the four
        rates and ΔPrecision the diagram needs.
    verdicts : PairVerdicts
    rng : numpy.random.Generator
        Drives the bootstrap (the only randomness).
    confidence : float
        Level of the percentile intervals, in (0, 1).
    recall_base : float in (0, 1], optional
        ``Recall_Base(AffectedItems)`` when it is known (a ground truth's): the range is that
        one value. Default: the 60%/80% rule of MQM §3.3 gives the value's (clamped into
        ``recall_base_range``; ``recall_base_rule`` is then ``"range"``), applied to the point
        estimate and to each replicate's diagram for ``stderr``.
    recall_base_range : (low, high) in (0, 1], low ≤ high
        The ``Recall_Base`` assumed when it is not given (abcde-spec §14; default 40-80%):
        ``ci_low``/``ci_high`` are the union of the bootstrap intervals over it, ``cs_low``/
        ``cs_high`` the extremes over it and over the inputs' sequences (:mod:`.ranges`).
    precision_base : float in (0, 1], optional
        ``Precision_Base(AffectedItems)``: Variant 2. Default Variant 1 (from ΔPrecision).
    n_boot : int
        Bootstrap replicates.
    recall_grid, precision_grid : sequence of float in (0, 1], optional
        Grids of the curve and the heat map (default 0.05, 0.10, ..., 1.00).
    resampling : {"stratum", "class"}
        ``"stratum"`` (default) resamples all draws of each stratum as the sample was
        drawn, judged or not; ``"class"`` resamples the judged draws within each class
        and stratum, keeping the class counts fixed (narrower; see the module notes of
        :mod:`metrics_core.derived`).
    labelled_draws : array-like of int, optional
        Each sample row's draws in its batch's labelled prefix (abcde-spec §14), as for
        :func:`~metrics_core.estimate_quality`; default every draw.
    draws, quality, exact : optional
        What a caller that also estimates the quality metrics has already computed from these
        arguments, not computed again: ``Draws.build(population, sample, verdicts, None,
        labelled_draws)``, ``quality_of_draws(draws, sample.scheme, confidence, sample.n_draws)``
        (the estimates at the default horizon), and ``impact_metrics(population).metrics``.

    Returns
    -------
    DerivedMetrics

    Examples
    --------
    Base {a,b,c},{d}; Exp {a,b},{c,d}; every pair judged by Ideal {a,b},{c,d}.

    >>> import numpy as np
    >>> from metrics_core import population_from_labels, sample_pairs, verdicts_from_judgements
    >>> pop = population_from_labels(["B1", "B1", "B1", "B2"], ["E1", "E1", "E2", "E2"])
    >>> s = sample_pairs(pop, n_draws=400, rng=np.random.default_rng(1))
    >>> v = verdicts_from_judgements([0, 0, 1, 2], [1, 2, 2, 3], ["equivalent", "not_equivalent",
    ...     "not_equivalent", "equivalent"])
    >>> d = derived_metrics(pop, s, v, rng=np.random.default_rng(0), n_boot=200)
    >>> d.diagram.variant, d.diagram.recall_base, list(d.estimates)
    (1, 0.6, ['DeltaRecall', 'IQ'])
    >>> e = d["DeltaRecall"]
    >>> bool(e.ci_low <= e.value <= e.ci_high), e.drawn_draws
    (True, 400)
    """
    confidence, n_boot, rng, recall_base, recall_bases, precision_base = derived_parameters(
        confidence, n_boot, rng, recall_base, recall_base_range, precision_base, resampling
    )
    if draws is None:
        draws = Draws.build(population, sample, verdicts, None, labelled_draws)
    elif draws.verdicts is not verdicts:
        raise ValueError("draws must be built from these verdicts")
    if quality is None:
        quality = quality_of_draws(draws, sample.scheme, confidence, sample.n_draws)
    exact = exact_metrics(population) if exact is None else exact
    replicates = replicate_inputs(draws, sample.scheme, n_boot=n_boot, rng=rng, within=resampling)
    return derived_of_replicates(
        quality,
        exact,
        replicates,
        scheme=sample.scheme,
        confidence=confidence,
        recall_base=recall_base,
        recall_bases=recall_bases,
        precision_base=precision_base,
        recall_grid=recall_grid,
        precision_grid=precision_grid,
        resampling=resampling,
    )


def derived_parameters(
    confidence: float,
    n_boot: int,
    rng: np.random.Generator,
    recall_base: float | None,
    recall_base_range: tuple[float, float],
    precision_base: float | None,
    resampling: str,
) -> tuple[float, int, np.random.Generator, float | None, tuple[float, float], float | None]:
    """:func:`derived_metrics`' parameters checked: the range assumed is ``recall_base`` alone when given."""
    confidence = open_unit_interval("confidence", confidence)
    n_boot = positive_int("n_boot", n_boot)
    rng = generator("rng", rng)
    if recall_base is not None:
        recall_base = unit_parameter("recall_base", recall_base)
    recall_bases = _recall_base_range(recall_base, recall_base_range)
    if precision_base is not None:
        precision_base = unit_parameter("precision_base", precision_base)
    if resampling not in RESAMPLING:
        raise ValueError(f"resampling must be one of {', '.join(RESAMPLING)}; got {resampling!r}")
    return confidence, n_boot, rng, recall_base, recall_bases, precision_base


def derived_of_replicates(
    quality: QualityEstimates,
    exact: Mapping[str, float],
    replicates: Mapping[str, np.ndarray],
    *,
    scheme: str,
    confidence: float,
    recall_base: float | None,
    recall_bases: tuple[float, float],
    precision_base: float | None,
    recall_grid: Any,
    precision_grid: Any,
    resampling: str,
) -> DerivedMetrics:
    """:func:`derived_metrics` from the point estimates ``quality`` (their values, sequences and unsure
    bounds) and the bootstrap ``replicates`` of the five inputs (parameters already checked)."""
    range_low, range_high = recall_bases
    n_boot = len(replicates["DeltaPrecision"])
    diagram = affected_item_diagram_from_metrics(quality, exact, recall_base=recall_base, precision_base=precision_base)
    if (
        recall_base is None
        and not math.isnan(diagram.recall_base)
        and not range_low <= diagram.recall_base <= range_high
    ):
        # The rule's 60%/80% lies outside the owner's range: the value at the nearest end of it.
        recall_base = min(max(diagram.recall_base, range_low), range_high)
        diagram = replace(
            diagram.with_parameters(recall_base=recall_base, precision_base=precision_base), recall_base_rule="range"
        )
    inputs = {
        "affected_weight_fraction": exact["AffectedWeightFraction"],
        "weight_fraction_of_base_cluster": exact["WeightFractionOfBaseCluster"],
        "jaccard_distance": exact["JaccardDistance"],
        "precision_base": precision_base,
    }
    rates = ("GoodSplitRate", "BadSplitRate", "GoodMergeRate", "BadMergeRate", "DeltaPrecision")
    at_value = diagram_arrays(**inputs, **_keywords(replicates, rates), recall_base=recall_base)
    grid = recall_base_grid(range_low, range_high)
    over_range = diagram_arrays(
        **inputs, **_keywords({k: replicates[k][:, None] for k in rates}, rates), recall_base=grid[None, :]
    )
    sequence = propagated_extremes(quality, exact, ("cs_low", "cs_high"), grid, precision_base)
    unsure = propagated_extremes(
        quality, exact, ("unsure_low", "unsure_high"), np.array([diagram.recall_base]), precision_base
    )
    estimates, undefined = {}, {}
    for name in DERIVED_METRICS:
        values = np.broadcast_to(at_value[name], (n_boot,))
        estimate, undefined[name] = _bootstrap_estimate(diagram.values[name], values, confidence, quality)
        union = percentile_union(np.broadcast_to(over_range[name], (n_boot, len(grid))), confidence)
        estimates[name] = _over_range(estimate, union, sequence[name], unsure[name], (range_low, range_high))
    return DerivedMetrics(
        scheme=scheme,
        confidence=confidence,
        n_boot=n_boot,
        estimates=estimates,
        diagram=diagram,
        curve=diagram.recall_base_curve(recall_grid),
        heat_map=diagram.heat_map(precision_grid, recall_grid),
        undefined_replicates=undefined,
        resampling=resampling,
    )


def _recall_base_range(recall_base: float | None, given: tuple[float, float]) -> tuple[float, float]:
    """The range assumed: the given Recall_Base alone, else ``given`` validated."""
    if recall_base is not None:
        return recall_base, recall_base
    try:
        low, high = given
    except (TypeError, ValueError):
        raise ValueError(f"recall_base_range must be a pair (low, high); got {given!r}") from None
    low, high = unit_parameter("recall_base_range low", low), unit_parameter("recall_base_range high", high)
    if low > high:
        raise ValueError(f"recall_base_range must have low <= high; got {given!r}")
    return low, high


_KEYWORDS = {
    "GoodSplitRate": "good_split_rate",
    "BadSplitRate": "bad_split_rate",
    "GoodMergeRate": "good_merge_rate",
    "BadMergeRate": "bad_merge_rate",
    "DeltaPrecision": "delta_precision",
}


def _keywords(values: Mapping[str, np.ndarray], names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The inputs by :func:`diagram_arrays`' keywords."""
    return {_KEYWORDS[name]: values[name] for name in names}


def _over_range(
    estimate: Estimate,
    union: tuple[float, float],
    sequence: tuple[float, float],
    unsure: tuple[float, float],
    recall_bases: tuple[float, float],
) -> RangeEstimate:
    """The estimate at the value's Recall_Base widened over the range: the interval to the union
    (and the value), the sequence to contain the interval, the unsure bounds to contain the value."""
    value = estimate.value
    ci = cs = (math.nan, math.nan)
    if not math.isnan(value) and not (math.isnan(union[0]) and math.isnan(estimate.ci_low)):
        ci = _span(*union, estimate.ci_low, estimate.ci_high, value)
    if not math.isnan(value) and not math.isnan(sequence[0] + sequence[1]):
        cs = _span(*sequence, *ci, value)
    low, high = (math.nan, math.nan) if math.isnan(value + unsure[0] + unsure[1]) else _span(*unsure, value)
    return RangeEstimate(
        value=value,
        stderr=estimate.stderr,
        ci_low=ci[0],
        ci_high=ci[1],
        judged_draws=estimate.judged_draws,
        drawn_draws=estimate.drawn_draws,
        cs_low=cs[0],
        cs_high=cs[1],
        unsure_low=low,
        unsure_high=high,
        recall_base_low=recall_bases[0],
        recall_base_high=recall_bases[1],
    )


def _span(*values: float) -> tuple[float, float]:
    """The least and greatest of the defined ``values``."""
    defined = [x for x in values if not math.isnan(x)]
    return min(defined), max(defined)


def _bootstrap_estimate(
    value: float, replicates: np.ndarray, confidence: float, quality: QualityEstimates
) -> tuple[Estimate, int]:
    """The point value with the percentile interval and SD of its defined replicates."""
    defined = replicates[np.isfinite(replicates)]
    draws = quality["DeltaPrecision"]
    undefined = len(replicates) - len(defined)
    if math.isnan(value) or len(defined) < 2:
        return Estimate(
            value=value,
            stderr=math.nan,
            ci_low=math.nan,
            ci_high=math.nan,
            judged_draws=draws.judged_draws,
            drawn_draws=draws.drawn_draws,
        ), undefined
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    stderr = float(np.std(defined, ddof=1))
    estimate = Estimate(
        value=value,
        stderr=stderr,
        ci_low=min(float(low), value),
        ci_high=max(float(high), value),
        judged_draws=draws.judged_draws,
        drawn_draws=draws.drawn_draws,
    )
    return estimate, undefined
