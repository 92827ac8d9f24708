"""What verdict reuse (abcde-spec §11) gave an experiment: pairs answered from its workspace, the
verdicts reused and what they saved at the experiment's cost per verdict."""

from __future__ import annotations

from decimal import Decimal
from typing import cast

from django.db.models import Count

from raterapp.models import Experiment, ExperimentBudget, ReusedVerdict, SampleBatch


def experiment_reuse_get(*, experiment: Experiment) -> dict:
    """``pairs`` answered (wholly or partly) by reused verdicts, ``verdicts`` reused, and ``saved``:
    over the reused pairs, min(reused verdicts, replication) × the cost per verdict (a string, as
    the budget's amounts); ``coupled_to``: the earlier experiment its first batch was drawn coupled to
    (``services.coupled_sampling``), with the draws that kept that one's draw, or None."""
    per_task = (
        ReusedVerdict.objects.filter(experiment=experiment)
        .values("task")
        .annotate(n=Count("pk"))
        .values_list("n", flat=True)
    )
    counts = list(per_task)
    cost = ExperimentBudget.objects.filter(experiment=experiment).values_list("cost_per_verdict", flat=True).first()
    cost = Decimal(0) if cost is None else cost
    saved_verdicts = sum(min(n, experiment.replication) for n in counts)
    return {
        "enabled": experiment.reuse_verdicts,
        "workspace": experiment.workspace.name,
        "pairs": len(counts),
        "verdicts": sum(counts),
        "saved_verdicts": saved_verdicts,
        "saved": str((cost * saved_verdicts).quantize(Decimal("0.01"))),
        "coupled_to": _coupled_to(experiment),
    }


def _coupled_to(experiment: Experiment) -> dict | None:
    batch = (
        SampleBatch.objects.filter(experiment=experiment, index=0, coupled_to__isnull=False)
        .select_related("coupled_to")
        .first()
    )
    if batch is None:
        return None
    return {
        "id": batch.coupled_to_id,
        "name": cast(Experiment, batch.coupled_to).name,
        "kept": batch.coupled_kept,
        "draws": batch.draws,
    }
