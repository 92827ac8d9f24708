"""ΔRecall and IQ of an experiment, with bootstrap intervals, and the quality estimates per
slice, from the verdicts so far.

The bootstrap takes seconds on a large sample and the slices pass over the sample once per
value, so neither is part of the snapshot (which must stay fast): each snapshot asks for them,
debounced by ``DERIVED_DEBOUNCE_SECONDS`` (:mod:`raterapp.services.scheduling`), and the
result is a :class:`DerivedEstimate` of its own, which says from how many verdicts it was
computed (the slices page reads its slices). With a ground-truth clustering the result also holds
the calibration against its ground-truth metrics (metrics_core computes all of it).
"""

from __future__ import annotations

import time

import numpy as np
from django.conf import settings
from django.db import transaction

from metrics_core import calibration_against_gold, derived_metrics
from metrics_core.derived.assisted import derived_metrics_assisted
from metrics_core.estimation.labelled import labelled_draws_by_metric
from raterapp.models import DerivedEstimate, Experiment
from raterapp.selectors.draw_order import labelled_prefix_get
from raterapp.selectors.samples import judged_sample_get
from raterapp.selectors.scores import model_assisted_scores
from raterapp.services.refresh.live import experiment_change_publish
from raterapp.services.refresh.slice_estimates import slice_estimates_compute
from raterapp.services.scheduling import DERIVED_REFRESH


def derived_refresh(*, experiment_id: int) -> DerivedEstimate:
    """Compute ΔRecall and IQ (and the calibration against the ground truth) and the slice estimates from every
    verdict; store the result.

    The bootstrap is seeded by the experiment's seed: the same verdicts give the same intervals.
    """
    DERIVED_REFRESH.started(experiment_id)
    started = time.monotonic()
    experiment = Experiment.objects.get(pk=experiment_id)
    judged = judged_sample_get(experiment=experiment)
    truth = (experiment.ground_truth_metrics or {}).get("truth")
    known = _numbers(truth).get("RecallBase", float("nan")) if truth else float("nan")
    labelled = labelled_prefix_get(experiment=experiment, judged=judged)
    arguments = {
        "confidence": experiment.confidence,
        "n_boot": settings.DERIVED_BOOTSTRAP_REPLICATES,
        # With a ground-truth clustering, its own Recall_Base; else the owner's range (abcde-spec §14).
        "recall_base": known if 0.0 < known <= 1.0 else None,
        "recall_base_range": (experiment.recall_base_low, experiment.recall_base_high),
        "labelled_draws": None if labelled is None else labelled.counts,  # draw order: the prefix (spec §14)
    }
    rng = np.random.default_rng(experiment.seed)
    derived = derived_metrics(judged.source, judged.sample, judged.verdicts, rng=rng, **arguments)
    payload = derived.as_dict()
    # ΔRecall and IQ of the model-assisted inputs (abcde-spec §15), with the same seed, as
    # ``estimate --scores --seed`` gives them.
    scores = model_assisted_scores(experiment=experiment, judged=judged, labelled=labelled)
    if scores is not None:
        assisted = derived_metrics_assisted(
            judged.source,
            judged.sample,
            judged.verdicts,
            scores,
            rng=np.random.default_rng(experiment.seed),
            human=derived,
            **arguments,
        )
        payload["model_assisted"] = {"estimates": assisted.estimates_dict()}
    if labelled is not None:  # each estimate's labelled draws, as ``estimate`` reports them (metrics-cli.md)
        per_metric = labelled_draws_by_metric(judged.sample, labelled.counts, payload["estimates"])
        for estimates in (payload["estimates"], payload.get("model_assisted", {}).get("estimates", {})):
            for name, estimate in estimates.items():
                estimate["labelled_draws"] = per_metric[name]
    payload["recall_base_source"] = "ground_truth" if 0.0 < known <= 1.0 else "owner"
    if truth:
        payload["calibration"] = calibration_against_gold(derived.diagram, _numbers(truth))
    slices = slice_estimates_compute(
        experiment=experiment, judged=judged, labelled_draws=None if labelled is None else labelled.counts
    )
    stored = DerivedEstimate.objects.create(
        experiment=experiment,
        judgements=len(judged.verdict),
        seconds=time.monotonic() - started,
        payload=payload,
        slices=slices,
    )
    message = {"derived": stored.pk, "experiment": experiment_id}
    transaction.on_commit(lambda: experiment_change_publish(experiment_id=experiment_id, message=message), robust=True)
    return stored


def _numbers(stored: dict) -> dict[str, float]:
    return {name: float("nan") if value is None else float(value) for name, value in stored.items()}
