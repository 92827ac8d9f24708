"""The diagram over a grid of its parameters: the Recall_Base curve and the (Precision_Base, Recall_Base) heat map."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..results import json_number


@dataclass(frozen=True)
class RecallBaseCurve:
    """ΔRecall(T) and IQ against ``Recall_Base(AffectedItems)`` (MQM §3.3), one diagram per grid value.

    ``valid`` is False where the parameter needed a clip (eqs 56, 60) or Variant 1
    does not apply.
    """

    variant: int | None
    precision_base: float | None
    recall_base: np.ndarray
    delta_recall: np.ndarray
    iq: np.ndarray
    valid: np.ndarray

    def as_dict(self) -> dict:
        return {
            "variant": self.variant,
            "precision_base": None if self.precision_base is None else json_number(self.precision_base),
            **_arrays_as_json(self, ("recall_base", "delta_recall", "iq")),
        }


@dataclass(frozen=True)
class RecallPrecisionHeatMap:
    """Variant 2 over a grid: row ``k`` is ``precision_base[k]``, column ``m`` is ``recall_base[m]``.

    ``valid`` is False where ``Precision_Base`` breaks eqs 52-53 or ``Recall_Base`` eq 58
    (the values there are those of the clipped diagram).
    """

    precision_base: np.ndarray
    recall_base: np.ndarray
    delta_recall: np.ndarray
    delta_precision: np.ndarray
    iq: np.ndarray
    valid: np.ndarray

    def as_dict(self) -> dict:
        return _arrays_as_json(self, ("precision_base", "recall_base", "delta_recall", "delta_precision", "iq"))


# The JSON names of the metric arrays; the parameters keep theirs.
_JSON_NAMES = {"delta_recall": "DeltaRecall", "delta_precision": "DeltaPrecision", "iq": "IQ"}


def _arrays_as_json(grid: RecallBaseCurve | RecallPrecisionHeatMap, names: tuple[str, ...]) -> dict:
    """The arrays ``names`` of a curve or heat map as JSON lists (NaN as None), then its ``valid`` flags."""
    out = {_JSON_NAMES.get(name, name): json_list(getattr(grid, name)) for name in names}
    out["valid"] = grid.valid.tolist()
    return out


def json_list(values: np.ndarray) -> list:
    return np.vectorize(json_number, otypes=[object])(values).tolist() if values.size else []
