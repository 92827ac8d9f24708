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
            "recall_base": json_list(self.recall_base),
            "DeltaRecall": json_list(self.delta_recall),
            "IQ": json_list(self.iq),
            "valid": self.valid.tolist(),
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
        return {
            "precision_base": json_list(self.precision_base),
            "recall_base": json_list(self.recall_base),
            "DeltaRecall": json_list(self.delta_recall),
            "DeltaPrecision": json_list(self.delta_precision),
            "IQ": json_list(self.iq),
            "valid": self.valid.tolist(),
        }


def json_list(values: np.ndarray) -> list:
    return np.vectorize(json_number, otypes=[object])(values).tolist() if values.size else []
