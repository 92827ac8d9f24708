"""Each metric's estimate and interval against the number of verdicts, from the stored snapshots:
the convergence chart of the experiment page."""

from __future__ import annotations

import numpy as np

from metrics_core import metrics_for_scheme
from raterapp.models import EstimateSnapshot, Experiment


def estimate_convergence_get(*, experiment: Experiment, max_points: int = 200, after: int | None = None) -> dict:
    """Each metric's estimate and interval against the number of verdicts, from the stored
    snapshots (only those with an id above ``after`` when given: what a live page lacks): all of
    them up to ``max_points``, else that many evenly spread (the last included)."""
    snapshots = EstimateSnapshot.objects.filter(experiment=experiment)
    if after is not None:
        snapshots = snapshots.filter(pk__gt=after)
    ids = list(snapshots.order_by("created_at", "pk").values_list("pk", flat=True))
    if len(ids) > max_points:
        ids = [ids[k] for k in np.unique(np.linspace(0, len(ids) - 1, max_points).round().astype(int))]
    rows = (
        EstimateSnapshot.objects.filter(pk__in=ids)
        .order_by("created_at", "pk")
        .values_list("pk", "created_at", "judgements", "estimates")
    )
    points = [
        {
            "snapshot": pk,
            "created_at": created_at.isoformat(),
            "judgements": judgements,
            "estimates": {
                name: {key: values.get(key) for key in ("value", "ci_low", "ci_high", "cs_low", "cs_high")}
                for name, values in stored["estimates"].items()
            },
        }
        for pk, created_at, judgements, stored in rows
    ]
    return {"metrics": list(metrics_for_scheme(experiment.scheme)), "points": points}
