"""Frozen result types returned by metrics_core; JSON-ready through ``as_dict``.

Undefined numbers (for example a rate of an empty class) are ``nan`` here and
``None`` in ``as_dict`` output, so that JSON never carries NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields
from typing import Any, ClassVar

import numpy as np

IMPACT_METRICS: tuple[str, ...] = (
    "JaccardDistance",
    "SplitDistance",
    "MergeDistance",
    "JaccardIndex",
    "AffectedJaccardIndex",
    "UnaffectedJaccardIndex",
    "AffectedWeightFraction",
    "SplitRate",
    "MergeRate",
    "WeightFractionOfBaseCluster",
)


def json_number(value: float) -> float | None:
    """``value`` as a JSON-safe float: ``None`` when it is NaN or infinite."""
    value = float(value)
    return value if math.isfinite(value) else None


class FlatResult:
    """A frozen result dataclass of plain fields. :meth:`as_dict` gives every field, in order, as a
    JSON value by its declared type: ``float`` through :func:`json_number` (NaN as None), ``int``
    and ``bool`` as Python's, others as they are."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]  # each subclass is a dataclass

    def as_dict(self) -> dict:
        return {f.name: _JSON_OF_TYPE.get(str(f.type), _as_is)(getattr(self, f.name)) for f in fields(self)}


def _as_is(value: Any) -> Any:
    return value


_JSON_OF_TYPE: dict[str, Callable[[Any], Any]] = {"float": json_number, "int": int, "bool": bool}


@dataclass(frozen=True, kw_only=True)
class ImpactMetrics:
    """Exact impact metrics of a whole population (abcde-spec §2).

    ``metrics`` maps each name of :data:`IMPACT_METRICS` to its value;
    ``WeightFractionOfBaseCluster`` is over the affected items only (MQM eq 49).
    """

    items: int
    affected_items: int
    total_weight: float
    affected_weight: float
    metrics: Mapping[str, float]

    def as_dict(self) -> dict:
        return {
            "items": self.items,
            "affected_items": self.affected_items,
            "total_weight": self.total_weight,
            "metrics": {name: json_number(v) for name, v in self.metrics.items()},
        }


@dataclass(frozen=True, eq=False)
class ImpactTable:
    """Impact metrics of each group of items (a cluster, a slice value).

    Row ``k`` describes the items labelled ``labels[k]``; each metric array is the
    metric of that set of items (pointwise metrics lifted as weighted means).
    """

    labels: np.ndarray
    items: np.ndarray
    affected_items: np.ndarray
    weight: np.ndarray
    metrics: Mapping[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.labels)


@dataclass(frozen=True, kw_only=True)
class Estimate(FlatResult):
    """An estimated metric with its standard error, confidence interval and confidence sequence.

    ``judged_draws`` of the ``drawn_draws`` sampled draws it rests on had a verdict (self
    pairs are known, not judged, and do not count: abcde-spec §14). ``ci_low``/``ci_high`` is the fixed-n interval of
    abcde-spec §6, ``cs_low``/``cs_high`` the anytime-valid confidence sequence of §9 (valid
    however often the estimate is looked at), and ``unsure_low``/``unsure_high`` the
    estimate's range had the *unsure* verdicts been decided (§12). The last four are
    ``nan`` when not computed (estimates stored before they existed, bootstrap metrics).
    """

    value: float
    stderr: float
    ci_low: float
    ci_high: float
    judged_draws: int
    drawn_draws: int
    cs_low: float = math.nan
    cs_high: float = math.nan
    unsure_low: float = math.nan
    unsure_high: float = math.nan

    @classmethod
    def from_dict(cls, data: Mapping) -> Estimate:
        """The inverse of :meth:`as_dict` (``None`` or a missing key back to ``nan``), for stored estimates."""
        number = lambda key: math.nan if data.get(key) is None else float(data[key])  # noqa: E731
        return cls(
            value=number("value"),
            stderr=number("stderr"),
            ci_low=number("ci_low"),
            ci_high=number("ci_high"),
            judged_draws=int(data.get("judged_draws") or 0),
            drawn_draws=int(data.get("drawn_draws") or 0),
            cs_low=number("cs_low"),
            cs_high=number("cs_high"),
            unsure_low=number("unsure_low"),
            unsure_high=number("unsure_high"),
        )

    def scaled(self, factor: float) -> Estimate:
        """This estimate times an exactly known positive ``factor`` (every bound and the SE scale with it)."""
        return Estimate(
            value=self.value * factor,
            stderr=self.stderr * factor,
            ci_low=self.ci_low * factor,
            ci_high=self.ci_high * factor,
            judged_draws=self.judged_draws,
            drawn_draws=self.drawn_draws,
            cs_low=self.cs_low * factor,
            cs_high=self.cs_high * factor,
            unsure_low=self.unsure_low * factor,
            unsure_high=self.unsure_high * factor,
        )

    @property
    def half_width(self) -> float:
        """Half the width of the interval (nan when undefined)."""
        return (self.ci_high - self.ci_low) / 2.0

    @property
    def cs_half_width(self) -> float:
        """Half the width of the confidence sequence (nan when undefined)."""
        return (self.cs_high - self.cs_low) / 2.0


@dataclass(frozen=True, kw_only=True)
class QualityEstimates:
    """Every quality metric a sampling scheme supports, estimated from verdicts."""

    scheme: str
    confidence: float
    estimates: Mapping[str, Estimate] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Estimate:
        return self.estimates[name]

    def __contains__(self, name: str) -> bool:
        return name in self.estimates

    @classmethod
    def from_dict(cls, data: Mapping) -> QualityEstimates:
        """The inverse of :meth:`as_dict`, for estimates stored as JSON."""
        return cls(
            scheme=data["scheme"],
            confidence=float(data["confidence"]),
            estimates={name: Estimate.from_dict(values) for name, values in data["estimates"].items()},
        )

    def as_dict(self) -> dict:
        return {
            "scheme": self.scheme,
            "confidence": self.confidence,
            "estimates": {name: e.as_dict() for name, e in self.estimates.items()},
        }
