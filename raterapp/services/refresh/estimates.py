"""Estimates of an experiment's quality metrics from the verdicts so far.

Every judgement asks for a recompute, but a burst of judgements shares one
(:mod:`raterapp.services.scheduling`, ``ESTIMATES_DEBOUNCE_SECONDS``). Each snapshot then
asks for the slower derived metrics and slice estimates (:mod:`raterapp.services.refresh.derived`),
which stay off this path because the snapshot must be fast. The numbers come
from metrics_core only; this module moves rows into arrays and back.
"""

from __future__ import annotations

import logging

import numpy as np
from django.db import transaction

from metrics_core import agreement_summary, estimate_quality, impact_metrics
from metrics_core.estimation import estimate_quality_assisted
from metrics_core.estimation.labelled import labelled_draws_by_metric
from metrics_core.growth import new_pair_share
from metrics_core.results import json_number
from raterapp.models import EstimateSnapshot, Experiment, OutboxMessage
from raterapp.selectors.draw_order import labelled_prefix_get
from raterapp.selectors.samples import JudgedSample, judged_sample_get
from raterapp.selectors.scores import model_assisted_scores
from raterapp.services.outbox import outbox_add
from raterapp.services.refresh.live import experiment_change_publish
from raterapp.services.scheduling import ESTIMATES_REFRESH

logger = logging.getLogger(__name__)


def estimates_refresh(*, experiment_id: int) -> EstimateSnapshot:
    """Estimate every metric of the experiment's scheme from all verdicts; store and publish a snapshot.

    The snapshot's JSON is ``QualityEstimates.as_dict()`` plus ``exact`` (the impact
    metrics), ``judgements`` (verdicts), ``judged_pairs`` (distinct pairs with at least
    one verdict, unsure included) and ``agreement`` (among the raters of replicated
    pairs), all read from one list of rows so that they agree.
    """
    ESTIMATES_REFRESH.started(experiment_id)
    experiment = Experiment.objects.get(pk=experiment_id)
    judged = judged_sample_get(experiment=experiment)
    payload = estimates_compute(experiment=experiment, judged=judged)
    with transaction.atomic():
        snapshot = EstimateSnapshot.objects.create(
            experiment=experiment,
            judgements=payload["judgements"],
            judged_pairs=payload["judged_pairs"],
            estimates=payload,
        )
        outbox_add(kind=OutboxMessage.Kind.DERIVED_REFRESH, target_id=experiment_id)

        # A named function (Django names a failing callback in its log); it never raises.
        def estimates_publish_after_commit() -> None:
            experiment_change_publish(experiment_id=experiment_id, message=estimate_snapshot_as_dict(snapshot))

        transaction.on_commit(estimates_publish_after_commit, robust=True)
    return snapshot


def estimates_compute(*, experiment: Experiment, judged: JudgedSample | None = None) -> dict:
    """The JSON of a snapshot of the experiment from every verdict now (or from ``judged``), without storing it."""
    judged = judged_sample_get(experiment=experiment) if judged is None else judged
    verdicts = judged.verdicts
    # The sequences are tuned to the draws planned when the experiment was created (spec §9),
    # whatever batches were added since.
    # In draw order, the estimates use each batch's labelled prefix only (abcde-spec §14).
    labelled = labelled_prefix_get(experiment=experiment, judged=judged)
    quality = estimate_quality(
        judged.source,
        judged.sample,
        verdicts,
        confidence=experiment.confidence,
        horizon=experiment.n_draws,
        labelled_draws=None if labelled is None else labelled.counts,
    )
    agreement = agreement_summary(unit=_unordered_pair(judged.i, judged.j, judged.n_positions), verdict=judged.verdict)
    payload = {
        **quality.as_dict(),
        "exact": _exact_metrics(experiment, judged.population),
        "judgements": len(judged.verdict),
        "judged_pairs": len(verdicts),
        "agreement": agreement.as_dict(),
        # For the plan (spec §10): how likely another draw is a pair not drawn yet (Good–Turing).
        "new_pair_share": json_number(new_pair_share(judged.sample)),
        "sample_draws": judged.sample.n_draws,
    }
    assisted = _model_assisted(experiment, judged, labelled)
    if assisted is not None:
        payload["model_assisted"] = assisted
    if labelled is not None:  # as ``estimate`` on a PAIRS file with positions (metrics-cli.md)
        payload["labelled"] = labelled.block
        per_metric = labelled_draws_by_metric(judged.sample, labelled.counts, payload["estimates"])
        for estimates in (payload["estimates"], payload.get("model_assisted", {}).get("estimates", {})):
            for name, estimate in estimates.items():
                estimate["labelled_draws"] = per_metric[name]
    return payload


def _model_assisted(experiment: Experiment, judged: JudgedSample, labelled) -> dict | None:
    """The model-assisted estimates (abcde-spec §15) as ``estimate --scores`` gives them, with what they
    assume: on when the owner's switch is, in draw order, once every non-self pair has a score."""
    scores = model_assisted_scores(experiment=experiment, judged=judged, labelled=labelled)
    if scores is None:
        return None
    assisted = estimate_quality_assisted(
        judged.source,
        judged.sample,
        judged.verdicts,
        scores,
        confidence=experiment.confidence,
        horizon=experiment.n_draws,
        labelled_draws=labelled.counts,
    )
    return assisted.as_dict()


def estimate_snapshot_as_dict(snapshot: EstimateSnapshot) -> dict:
    """The JSON of a snapshot, as the API returns it and the channel carries it."""
    return {
        "id": snapshot.pk,
        "experiment": snapshot.experiment_id,
        "created_at": snapshot.created_at.isoformat(),
        **snapshot.estimates,
    }


def _exact_metrics(experiment: Experiment, population) -> dict:
    stored = (experiment.impact or {}).get("metrics")
    return stored if stored is not None else impact_metrics(population).as_dict()["metrics"]


def _unordered_pair(i, j, n_items: int):
    """One key per unordered pair of item positions: raters see a pair either way round."""
    return np.minimum(i, j) * n_items + np.maximum(i, j)
