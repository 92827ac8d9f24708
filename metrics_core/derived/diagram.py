"""Result types of the expected-affected-item diagram (MQM §3.2-3.3, §4.2) and the functions that build them.

The arithmetic is in :mod:`.equations`; here the diagram is validated, labelled with
the paper's names and reported with its variant, clips and checks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..results import Estimate, json_number
from .curves import RecallBaseCurve, RecallPrecisionHeatMap
from .equations import DEFAULT_GRID, clip_side, diagram_arrays, valid_parameters

# Inputs as the ABCDE metrics of T name them (keyword of affected_item_diagram, metric name).
DIAGRAM_INPUTS: tuple[tuple[str, str], ...] = (
    ("affected_weight_fraction", "AffectedWeightFraction"),
    ("good_split_rate", "GoodSplitRate"),
    ("bad_split_rate", "BadSplitRate"),
    ("good_merge_rate", "GoodMergeRate"),
    ("bad_merge_rate", "BadMergeRate"),
    ("delta_precision", "DeltaPrecision"),
    ("weight_fraction_of_base_cluster", "WeightFractionOfBaseCluster"),
    ("jaccard_distance", "JaccardDistance"),
)
_QUALITY_INPUTS = ("GoodSplitRate", "BadSplitRate", "GoodMergeRate", "BadMergeRate", "DeltaPrecision")
_AFFECTED_INPUTS = (
    "GoodSplitRate",
    "BadSplitRate",
    "GoodMergeRate",
    "BadMergeRate",
    "SplitRate",
    "MergeRate",
    "DeltaPrecision",
    "WeightFractionOfBaseCluster",
)
_WEIGHTS = (
    "BaseWeight",
    "StableWeight",
    "ExpWeight",
    "GoodSplitWeight",
    "BadSplitWeight",
    "GoodMergeWeight",
    "BadMergeWeight",
    "MinGoodStableWeight",
    "GSW",
    "GoodStableWeight",
    "BadStableWeight",
    "Missing",
    "MissingWeight",
)
_VALUES = (
    "RecallBase",
    "RecallBaseMax",
    "PrecisionBaseMin",
    "PrecisionBaseMax",
    "RecallBaseDiagram",
    "RecallExp",
    "PrecisionBaseDiagram",
    "PrecisionExp",
    "DeltaRecallAffected",
    "DeltaPrecisionAffected",
    "DeltaRecall",
    "DeltaPrecision",
    "JaccardDistanceBaseIdeal",
    "JaccardDistanceExpIdeal",
    "JaccardDistanceToIdealImprovement",
    "JaccardDistance",
    "JaccardDistanceDiagram",
    "IQUnclipped",
    "IQ",
)


@dataclass(frozen=True)
class AffectedItemDiagram:
    """The expected situation of a typical affected item (MQM §3.2) and what it implies.

    Attributes
    ----------
    variant : int or None
        1 (GoodStableWeight from ΔPrecision, eq 51), 2 (from ``precision_base``, eq 55),
        or None when the diagram is undefined (no affected items, an undefined input, or
        Variant 1 with SplitRate = MergeRate).
    recall_base : float
        ``Recall_Base(AffectedItems)`` used; ``recall_base_rule`` says whether it was
        ``"given"`` or the 60%/80% ``"default"`` of MQM §3.3.
    precision_base : float or None
        The Variant 2 parameter.
    inputs : mapping
        The metrics of the affected items (eqs 35-40): the four rates, SplitRate,
        MergeRate, DeltaPrecision, WeightFractionOfBaseCluster; and AffectedWeightFraction.
    weights : mapping
        The areas, ``BaseWeight`` = 1 (eqs 42-47, 50-51 or 55, 56-57, 59-60); ``GSW`` is
        GoodStableWeight before the clip, ``Missing`` MissingWeight before it.
    values : mapping
        Results (eqs 58, 61-67, 79-83, 77): ``DeltaRecall`` and ``IQ`` are of T;
        ``RecallBaseMax`` is the bound of eq 58; ``JaccardDistanceDiagram`` is eq 67 and
        ``JaccardDistance`` the exact value beside it.
    clips : mapping
        ``GoodStableWeight`` (eq 56), ``MissingWeight`` (eq 60) and ``IQ`` (§4.2): None,
        ``"min"`` or ``"max"`` (the bound the value was clipped to).
    checks : mapping
        ``Variant1Applies`` (SplitRate ≠ MergeRate), ``PrecisionBaseInRange`` (eqs 52-53;
        None under Variant 1), ``GoodStableWeightInRange`` (eq 56 did not clip),
        ``RecallBaseInRange`` (eq 58), ``IQInRange``, ``RecallPositive``
        (GoodMergeWeight > BadSplitWeight).
    """

    variant: int | None
    recall_base: float
    recall_base_rule: str
    precision_base: float | None
    inputs: Mapping[str, float]
    weights: Mapping[str, float]
    values: Mapping[str, float]
    clips: Mapping[str, str | None]
    checks: Mapping[str, bool | None]

    @property
    def delta_recall(self) -> float:
        """ΔRecall(T) (eq 65)."""
        return self.values["DeltaRecall"]

    @property
    def iq(self) -> float:
        """IQ of Base → Exp, clipped to [-1, 1] (MQM §4.2)."""
        return self.values["IQ"]

    def recall_base_curve(self, recall_grid: Any = None) -> RecallBaseCurve:
        """This diagram's ΔRecall(T) and IQ at each ``Recall_Base`` of ``recall_grid`` (default 0.05 … 1.00).

        Uses the same variant (and ``precision_base``) as the diagram.
        """
        grid = _grid("recall_grid", recall_grid)
        arrays = diagram_arrays(**self._arguments(), recall_base=grid, precision_base=self.precision_base)
        variant = 2 if self.precision_base is not None else 1
        return RecallBaseCurve(
            variant=variant,
            precision_base=self.precision_base,
            recall_base=grid,
            delta_recall=arrays["DeltaRecall"],
            iq=arrays["IQ"],
            valid=valid_parameters(arrays, variant),
        )

    def heat_map(self, precision_grid: Any = None, recall_grid: Any = None) -> RecallPrecisionHeatMap:
        """Variant 2 ΔRecall(T), ΔPrecision(T) and IQ over ``(Precision_Base, Recall_Base)`` (MQM §3.3)."""
        p_grid = _grid("precision_grid", precision_grid)
        r_grid = _grid("recall_grid", recall_grid)
        arrays = diagram_arrays(**self._arguments(), recall_base=r_grid[None, :], precision_base=p_grid[:, None])
        shape = (len(p_grid), len(r_grid))
        valid = np.broadcast_to(valid_parameters(arrays, 2), shape)
        return RecallPrecisionHeatMap(
            precision_base=p_grid,
            recall_base=r_grid,
            delta_recall=np.broadcast_to(arrays["DeltaRecall"], shape),
            delta_precision=np.broadcast_to(arrays["DeltaPrecision"], shape),
            iq=np.broadcast_to(arrays["IQ"], shape),
            valid=valid,
        )

    def with_parameters(self, *, recall_base: float | None = None, precision_base: float | None = None):
        """The diagram of the same inputs with other parameters (None: Variant 1, the default rule)."""
        return affected_item_diagram(**self._arguments(), recall_base=recall_base, precision_base=precision_base)

    def _arguments(self) -> dict[str, float]:
        """The T-level inputs the diagram was built from."""
        awf = self.inputs["AffectedWeightFraction"]
        scale = lambda name: self.inputs[name] * awf  # noqa: E731
        return {
            "affected_weight_fraction": awf,
            "good_split_rate": scale("GoodSplitRate"),
            "bad_split_rate": scale("BadSplitRate"),
            "good_merge_rate": scale("GoodMergeRate"),
            "bad_merge_rate": scale("BadMergeRate"),
            "delta_precision": scale("DeltaPrecision"),
            "weight_fraction_of_base_cluster": self.inputs["WeightFractionOfBaseCluster"],
            "jaccard_distance": self.values["JaccardDistance"],
        }

    def as_dict(self) -> dict:
        return {
            "variant": self.variant,
            "recall_base": json_number(self.recall_base),
            "recall_base_rule": self.recall_base_rule,
            "precision_base": None if self.precision_base is None else json_number(self.precision_base),
            "inputs": {name: json_number(v) for name, v in self.inputs.items()},
            "weights": {name: json_number(v) for name, v in self.weights.items()},
            "values": {name: json_number(v) for name, v in self.values.items()},
            "clips": dict(self.clips),
            "checks": dict(self.checks),
        }


def affected_item_diagram(
    *,
    affected_weight_fraction: float,
    good_split_rate: float | Estimate,
    bad_split_rate: float | Estimate,
    good_merge_rate: float | Estimate,
    bad_merge_rate: float | Estimate,
    delta_precision: float | Estimate,
    weight_fraction_of_base_cluster: float,
    jaccard_distance: float,
    recall_base: float | None = None,
    precision_base: float | None = None,
) -> AffectedItemDiagram:
    """Build the expected-affected-item diagram of MQM §3.2 and read ΔRecall(T) and IQ from it.

    Parameters
    ----------
    affected_weight_fraction : float
        Exact ``AffectedWeightFraction`` (eq 35).
    good_split_rate, bad_split_rate, good_merge_rate, bad_merge_rate, delta_precision : float or Estimate
        The ABCDE quality metrics of the whole population T (an :class:`Estimate`
        counts by its value); divided by ``affected_weight_fraction`` here (eqs 36-40).
    weight_fraction_of_base_cluster : float
        ``WeightFractionOfBaseCluster(AffectedItems)`` (eq 49; the impact metric of that name).
    jaccard_distance : float
        Exact ``JaccardDistance(T)`` between Base and Exp: IQ's denominator (eq 77).
    recall_base : float in (0, 1], optional
        ``Recall_Base(AffectedItems)``. Default: 0.6 when the change is recall-positive
        (GoodMergeWeight > BadSplitWeight in the diagram), else 0.8 (MQM §3.3).
    precision_base : float in (0, 1], optional
        ``Precision_Base(AffectedItems)``. Given: Variant 2 (eq 55); omitted: Variant 1
        (eq 51, which needs SplitRate ≠ MergeRate).

    Returns
    -------
    AffectedItemDiagram

    Examples
    --------
    Base {a,b,c},{d}; Exp {a,b},{c,d}; Ideal {a,b},{c,d} (all items affected): the rates
    are GoodSplitRate 1/3, GoodMergeRate 1/4, the Bad ones 0, ΔPrecision 1/3; the true
    ΔRecall is 1/4 and the diagram with the true Recall_Base 3/4 finds it.

    >>> d = affected_item_diagram(affected_weight_fraction=1.0, good_split_rate=1/3,
    ...     bad_split_rate=0.0, good_merge_rate=1/4, bad_merge_rate=0.0, delta_precision=1/3,
    ...     weight_fraction_of_base_cluster=1/2, jaccard_distance=23/48, recall_base=3/4)
    >>> d.variant, round(d.weights["GoodStableWeight"], 12), round(d.delta_recall, 12)
    (1, 0.666666666667, 0.25)
    >>> d.clips
    {'GoodStableWeight': None, 'MissingWeight': None, 'IQ': None}
    >>> default = affected_item_diagram(affected_weight_fraction=1.0, good_split_rate=1/3,
    ...     bad_split_rate=0.0, good_merge_rate=1/4, bad_merge_rate=0.0, delta_precision=1/3,
    ...     weight_fraction_of_base_cluster=1/2, jaccard_distance=23/48)
    >>> default.recall_base, default.recall_base_rule, round(default.delta_recall, 12)
    (0.6, 'default', 0.2)
    """
    given = {
        "affected_weight_fraction": affected_weight_fraction,
        "good_split_rate": good_split_rate,
        "bad_split_rate": bad_split_rate,
        "good_merge_rate": good_merge_rate,
        "bad_merge_rate": bad_merge_rate,
        "delta_precision": delta_precision,
        "weight_fraction_of_base_cluster": weight_fraction_of_base_cluster,
        "jaccard_distance": jaccard_distance,
    }
    numbers = {name: _number(name, value) for name, value in given.items()}
    if recall_base is not None:
        recall_base = unit_parameter("recall_base", recall_base)
    if precision_base is not None:
        precision_base = unit_parameter("precision_base", precision_base)
    return diagram_from_arrays(
        diagram_arrays(**numbers, recall_base=recall_base, precision_base=precision_base),
        recall_base_given=recall_base is not None,
        precision_base=precision_base,
    )


def affected_item_diagram_from_metrics(
    quality: Any, exact: Mapping[str, float], *, recall_base: float | None = None, precision_base: float | None = None
) -> AffectedItemDiagram:
    """:func:`affected_item_diagram` from metrics by name.

    ``quality`` maps the four rates and ``DeltaPrecision`` to numbers or estimates (a
    :class:`QualityEstimates`, or :func:`quality_from_gold`'s dict for the exact diagram);
    ``exact`` maps the impact metrics (``ImpactMetrics.metrics``).

    Examples
    --------
    The exact diagram of the example of :func:`affected_item_diagram`. Exp is the Ideal
    clustering, so the true IQ is 1; the diagram gives (5/11) / (23/48) = 240/253.

    >>> from metrics_core import impact_metrics, population_from_labels, quality_from_gold
    >>> pop = population_from_labels(["B1", "B1", "B1", "B2"], ["E1", "E1", "E2", "E2"])
    >>> d = affected_item_diagram_from_metrics(quality_from_gold(pop, [1, 1, 2, 2]),
    ...     impact_metrics(pop).metrics, recall_base=0.75)
    >>> round(d.delta_recall, 12), round(d.iq, 4)
    (0.25, 0.9486)
    """
    arguments = {}
    for keyword, name in DIAGRAM_INPUTS:
        source = quality if name in _QUALITY_INPUTS else exact
        if name not in source:
            raise ValueError(f"{'quality' if source is quality else 'exact'} has no {name}")
        arguments[keyword] = source[name]
    return affected_item_diagram(**arguments, recall_base=recall_base, precision_base=precision_base)


def diagram_from_arrays(
    arrays: Mapping[str, np.ndarray], *, recall_base_given: bool, precision_base: float | None
) -> AffectedItemDiagram:
    """The :class:`AffectedItemDiagram` of scalar :func:`diagram_arrays` output.

    Undefined quantities (no affected item, an undefined rate, Variant 1 with SplitRate =
    MergeRate) are NaN, and then the variant, the clips and the checks that need them are None.
    """
    a = {name: float(value) for name, value in arrays.items()}
    a = {name: value if math.isfinite(value) else math.nan for name, value in a.items()}
    defined = a["AffectedWeightFraction"] > 0 and not math.isnan(a["GSW"] + a["DeltaRecall"])
    variant = (2 if precision_base is not None else 1) if defined else None

    def clip(value: float, low: float, high: float) -> str | None:
        return (str(clip_side(value, low, high)) or None) if defined else None

    def unclipped(value: float, low: float, high: float) -> bool | None:
        return None if not defined else clip(value, low, high) is None

    inputs = {"AffectedWeightFraction": a["AffectedWeightFraction"]}
    inputs |= {name: a["DeltaPrecisionInput" if name == "DeltaPrecision" else name] for name in _AFFECTED_INPUTS}
    rates_known = not math.isnan(a["SplitRate"] + a["MergeRate"])
    in_range = None
    if precision_base is not None and defined:
        in_range = unclipped(precision_base, a["PrecisionBaseMin"], a["PrecisionBaseMax"])
    return AffectedItemDiagram(
        variant=variant,
        recall_base=a["RecallBase"],
        recall_base_rule="given" if recall_base_given else "default",
        precision_base=precision_base,
        inputs=inputs,
        weights={name: a[name] for name in _WEIGHTS},
        values={name: a[name] for name in _VALUES},
        clips={
            "GoodStableWeight": clip(a["GSW"], a["MinGoodStableWeight"], a["StableWeight"]),
            "MissingWeight": clip(a["Missing"], 0.0, math.inf),
            "IQ": clip(a["IQUnclipped"], -1.0, 1.0),
        },
        checks={
            "Variant1Applies": bool(a["RatesDiffer"]) if rates_known else None,
            "PrecisionBaseInRange": in_range,
            "GoodStableWeightInRange": unclipped(a["GSW"], a["MinGoodStableWeight"], a["StableWeight"]),
            "RecallBaseInRange": unclipped(a["RecallBase"], 0.0, a["RecallBaseMax"]),
            "IQInRange": unclipped(a["IQUnclipped"], -1.0, 1.0),
            "RecallPositive": bool(a["RecallPositive"]) if defined else None,
        },
    )


def unit_parameter(name: str, value: Any) -> float:
    """A parameter in (0, 1], or a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    if not 0.0 < float(value) <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return float(value)


def _number(name: str, value: Any) -> float:
    if isinstance(value, Estimate):
        return float(value.value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number or an Estimate, got {value!r}")
    return float(value)


def _grid(name: str, grid: Any) -> np.ndarray:
    if grid is None:
        return DEFAULT_GRID.copy()
    values = np.asarray(grid, dtype=np.float64)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError(f"{name} must be a non-empty one-dimensional sequence")
    bad = ~((values > 0) & (values <= 1))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{k}] = {float(values[k])!r}: must be in (0, 1]")
    return values
