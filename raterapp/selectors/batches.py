"""An experiment's batches of draws, and the plan of another one before it is drawn (abcde-spec §10)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.db.models import Sum

from metrics_core.growth import batch_expectation, new_pair_share_from_counts
from raterapp.models import Experiment, ExperimentBudget, SampleBatch, SampledPair

# What a batch may hold: the batch API refuses more, and the batch form proposes no more.
MAX_BATCH_DRAWS = 100_000
MAX_TOTAL_DRAWS = 1_000_000


def sample_batches_list(*, experiment: Experiment) -> list[dict]:
    """Every batch, oldest first, with who drew it, when, and what it added."""
    rows = SampleBatch.objects.filter(experiment=experiment).select_related("drawn_by").order_by("index")
    return [sample_batch_as_dict(batch) for batch in rows]


def sample_batch_as_dict(batch: SampleBatch) -> dict:
    return {
        "id": batch.pk,
        "index": batch.index,
        "draws": batch.draws,
        "status": batch.status,
        "status_label": batch.get_status_display(),
        "error": batch.error,
        "drawn_by": batch.drawn_by.get_username() if batch.drawn_by else None,
        "created_at": batch.created_at.isoformat(),
        "finished_at": batch.finished_at.isoformat() if batch.finished_at else None,
        # One meaning of "new pairs" everywhere (the plan's too): pairs of two different items no
        # earlier batch drew, which became tasks for the raters. The sample's rows count more:
        # each order of a pair, and an item drawn with itself.
        "new_pairs": batch.new_tasks,
        "new_tasks": batch.new_tasks,
        "new_sample_rows": batch.new_pairs,
        "repeated_pairs": batch.repeated_pairs,
        "expected_verdicts": batch.expected_verdicts,
    }


def sample_batch_plan_get(*, experiment: Experiment, draws: int) -> dict:
    """What a batch of ``draws`` draws is expected to add (new pairs to judge, the batch's
    ``new_pairs`` once drawn; verdicts; cost), beside the budget it would spend from."""
    share = sample_new_pair_share(experiment=experiment)
    budget: Mapping[str, Any] = ExperimentBudget.objects.filter(experiment=experiment).values(
        "max_verdicts", "spent", "cost_per_verdict"
    ).first() or {"max_verdicts": None, "spent": 0, "cost_per_verdict": 0}
    expected = batch_expectation(
        new_pair_share=0.0 if math.isnan(share) else share,
        draws=draws,
        replication=experiment.replication,
        cost_per_verdict=float(budget["cost_per_verdict"]),
    )
    left = None if budget["max_verdicts"] is None else max(budget["max_verdicts"] - budget["spent"], 0)
    return {
        **expected.as_dict(),
        "sample_draws": _sample_draws(experiment),
        "replication": experiment.replication,
        "cost_per_verdict": float(budget["cost_per_verdict"]),
        "budget_left": left,
        "within_budget": None if left is None else expected.verdicts <= left,
    }


def sample_new_pair_share(*, experiment: Experiment) -> float:
    """The chance that another draw is a pair the sample has not drawn yet (Good–Turing), from
    the stored draws: a task is one unordered non-self pair, whichever way round it was drawn."""
    once = (
        SampledPair.objects.filter(experiment=experiment, task__isnull=False)
        .values("task")
        .annotate(draws_of_pair=Sum("draws"))
        .filter(draws_of_pair=1)
        .count()
    )
    return new_pair_share_from_counts(pairs_drawn_once=once, draws=_sample_draws(experiment))


def _sample_draws(experiment: Experiment) -> int:
    return SampledPair.objects.filter(experiment=experiment).aggregate(n=Sum("draws"))["n"] or 0


def sample_batches_drawn_total(*, experiment: Experiment) -> int:
    """Draws of every batch drawn so far (batch 0 included)."""
    return sum(
        SampleBatch.objects.filter(experiment=experiment, status=SampleBatch.Status.DONE).values_list(
            "draws", flat=True
        )
    )


def sample_batch_draws_limit(*, experiment: Experiment) -> int:
    """The most draws the next batch may have: one batch's limit, and the room the sample has left
    under ``MAX_TOTAL_DRAWS`` (0 when it is full). ``sample_batch_request`` refuses more."""
    room = MAX_TOTAL_DRAWS - sample_batches_drawn_total(experiment=experiment)
    return max(min(MAX_BATCH_DRAWS, room), 0)


def sample_batch_proposal(*, experiment: Experiment, wanted: int) -> dict:
    """The draws the batch form proposes for ``wanted`` draws: at most what the API accepts.
    ``clamped`` when that is fewer than wanted; ``limit`` the most the next batch may have."""
    limit = sample_batch_draws_limit(experiment=experiment)
    wanted = max(int(wanted), 1)
    return {"draws": min(wanted, limit), "wanted": wanted, "limit": limit, "clamped": wanted > limit}
