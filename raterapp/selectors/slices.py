"""Slices of an experiment by an item attribute: each value's exact impact and quality estimates.

The impact of every value was stored at preparation (``ImpactGroup``). Quality estimates of
the heaviest values are computed by the worker's derived step after each estimate snapshot and
stored on its ``DerivedEstimate`` (``services/refresh/slice_estimates.py``); the page shows the newest
ones with the number of verdicts they came from, and shows them as pending until there are any.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raterapp.models import DerivedEstimate, Experiment, ImpactGroup
from raterapp.selectors.experiments import estimate_snapshot_latest

CLUSTER_DIMENSIONS = ("base", "exp")
PENDING_NOTE = "Quality estimates per value are computed shortly after the estimate snapshot."


class UnknownAttribute(LookupError):
    pass


def slice_labels_heaviest(*, experiment: Experiment, per_slice: int) -> dict[str, list[str]]:
    """Each slice attribute's values as the impact breakdown stored them, heaviest first (ties by
    label), at most ``per_slice`` each."""
    labels: dict[str, list[str]] = {}
    rows = (
        ImpactGroup.objects.filter(experiment=experiment)
        .exclude(dimension__in=CLUSTER_DIMENSIONS)
        .order_by("dimension", "-weight", "label")
        .values_list("dimension", "label")
    )
    for dimension, label in rows:
        values = labels.setdefault(dimension, [])
        if len(values) < per_slice:
            values.append(label)
    return labels


def slice_attributes_list(*, experiment: Experiment) -> list[str]:
    """The item attributes the experiment can be sliced by (those with few distinct values)."""
    return list(
        ImpactGroup.objects.filter(experiment=experiment)
        .exclude(dimension__in=CLUSTER_DIMENSIONS)
        .order_by("dimension")
        .values_list("dimension", flat=True)
        .distinct()
    )


def experiment_slices_get(*, experiment: Experiment, attribute: str) -> dict:
    """Every value of ``attribute``, heaviest first, with its impact metrics and (for the
    heaviest, as the latest derived step stored them) its quality estimates: the slice's own
    metric and its contribution to the overall metric, each with its interval and reading.
    ``computed_from`` says which derived step and how many verdicts they came from."""
    if attribute in CLUSTER_DIMENSIONS:
        raise UnknownAttribute(attribute)
    groups = list(ImpactGroup.objects.filter(experiment=experiment, dimension=attribute).order_by("-weight", "label"))
    if not groups:
        raise UnknownAttribute(attribute)
    snapshot = estimate_snapshot_latest(experiment=experiment)
    in_memory = experiment.engine != Experiment.Engine.DASK
    stored = _slice_estimates_latest(experiment=experiment)
    quality = (stored["slices"] if stored else {}).get(attribute, {})
    total_weight = (experiment.impact or {}).get("total_weight") or 0.0
    rows = [
        {
            "label": group.label,
            "items": group.items,
            "affected_items": group.affected_items,
            "weight": group.weight,
            "weight_fraction": group.weight / total_weight if total_weight else None,
            "impact": group.metrics,
            **quality.get(group.label, {"metric": None, "contribution": None}),
        }
        for group in groups
    ]
    return {
        "attribute": attribute,
        "snapshot": snapshot.pk if snapshot is not None else None,
        "computed_from": _computed_from(stored),
        "scheme": experiment.scheme,
        "confidence": experiment.confidence,
        "estimated_values": len(quality),
        "note": _note(in_memory=in_memory, pending=snapshot is not None and stored is None),
        "values": len(groups),
        "rows": rows,
    }


def _slice_estimates_latest(*, experiment: Experiment) -> Mapping[str, Any] | None:
    return (
        DerivedEstimate.objects.filter(experiment=experiment, slices__isnull=False)
        .order_by("-created_at", "-pk")
        .values("pk", "created_at", "judgements", "slices")
        .first()
    )


def _computed_from(stored: Mapping[str, Any] | None) -> dict | None:
    if stored is None:
        return None
    return {"derived": stored["pk"], "created_at": stored["created_at"].isoformat(), "judgements": stored["judgements"]}


def _note(*, in_memory: bool, pending: bool) -> str | None:
    if not in_memory:
        return "Prepared on Dask: exact impact per value; quality estimates per slice need the in-memory engine."
    return PENDING_NOTE if pending else None
