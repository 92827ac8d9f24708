"""Rater-aware estimates and the transitivity of the verdicts (abcde-spec §13), computed by
the worker beside ΔRecall and IQ and stored as a :class:`RaterAwareEstimate`.

The Dawid–Skene fit and its bootstrap over pairs take seconds, so, like the derived
metrics, they are not part of the snapshot: each derived refresh schedules one, debounced.
The transitivity report is computed in the same run, from the same verdicts, so that the
counts and the review list always describe the verdicts the estimates saw. metrics_core
computes all of it; this module reads the rows, maps positions to item ids and stores.
"""

from __future__ import annotations

import time

import numpy as np
from django.conf import settings
from django.db import transaction

from metrics_core import estimate_quality_rater_aware, transitivity_report
from metrics_core.estimation.labelled import labelled_draws_by_metric
from raterapp.models import Experiment, Judgement, RaterAwareEstimate, ReusedVerdict, SampledPair
from raterapp.selectors.draw_order import labelled_prefix_get
from raterapp.selectors.samples import judged_sample_get
from raterapp.services.refresh.live import experiment_change_publish
from raterapp.services.scheduling import RATER_AWARE_REFRESH


def rater_aware_refresh(*, experiment_id: int) -> RaterAwareEstimate:
    """Fit the raters, estimate from the pairs' posteriors, count the inconsistent triangles; store.

    The bootstrap is seeded by the experiment's seed: the same verdicts give the same intervals.
    Data the model cannot be fitted on (no verdicts yet, an experiment prepared on Dask, which
    has no population in memory) is stored as ``error`` beside the transitivity report.
    """
    RATER_AWARE_REFRESH.started(experiment_id)
    started = time.monotonic()
    experiment = Experiment.objects.get(pk=experiment_id)
    rows = _verdict_rows(experiment)
    payload, error = None, ""
    try:
        payload = _rater_aware_payload(experiment, rows)
    except ValueError as exc:
        error = str(exc)
    stored = RaterAwareEstimate.objects.create(
        experiment=experiment,
        judgements=int(np.sum(rows["gold"] == "")),
        seconds=time.monotonic() - started,
        payload=payload,
        error=error,
        transitivity=_transitivity_payload(experiment, rows),
    )
    message = {"rater_aware": stored.pk, "experiment": experiment_id}
    transaction.on_commit(lambda: experiment_change_publish(experiment_id=experiment_id, message=message), robust=True)
    return stored


_TASK_FIELDS = (
    "task_id",
    "task__item_a__position",
    "task__item_b__position",
    "task__item_a__item_id",
    "task__item_b__item_id",
)


def _verdict_rows(experiment: Experiment) -> dict[str, np.ndarray]:
    """Every verdict of the experiment, gold questions included, as columns (``gold``: the known answer or "").

    Verdicts reused from another experiment of the workspace (abcde-spec §11) come first, on this
    experiment's task: they count here exactly like its own, with the rater who gave them."""
    names = ("task", "i", "j", "item_i", "item_j", "verdict", "rater", "gold")
    reused = (
        ReusedVerdict.objects.filter(experiment=experiment)
        .order_by("source_id")
        .values_list(*_TASK_FIELDS, "source__verdict", "source__rater_id", "task__gold_answer")
    )
    own = (
        Judgement.objects.filter(task__experiment=experiment)
        .order_by("pk")
        .values_list(*_TASK_FIELDS, "verdict", "rater_id", "task__gold_answer")
    )
    values = [*reused, *own]
    columns = list(zip(*values)) if values else [() for _ in names]
    return {name: np.array(column, dtype=object) for name, column in zip(names, columns, strict=True)}


def _rater_aware_payload(experiment: Experiment, rows: dict[str, np.ndarray]) -> dict:
    sampled = rows["gold"] == ""
    if not sampled.any():
        raise ValueError("No verdicts yet.")
    if not _raters_are_identifiable(rows):
        raise ValueError(
            "Rater-aware estimates need replicated pairs or gold questions: so far every pair has one sure "
            "verdict and no gold question was answered, so nothing tells a rater's errors apart."
        )
    judged = judged_sample_get(experiment=experiment)
    if judged.population is None:
        raise ValueError("Rater-aware estimates need the population in memory; this experiment was prepared on Dask.")
    gold = _gold_questions(rows)
    # In draw order, from each batch's labelled prefix, as the snapshot's estimates (abcde-spec §14).
    labelled = labelled_prefix_get(experiment=experiment, judged=judged)
    counts = None if labelled is None else labelled.counts
    fit = estimate_quality_rater_aware(
        judged.population,
        judged.sample,
        i=rows["i"].astype(np.int64),
        j=rows["j"].astype(np.int64),
        verdict=rows["verdict"],
        rater=rows["rater"].astype(np.int64),
        gold_i=gold[0],
        gold_j=gold[1],
        gold_answer=gold[2],
        rng=np.random.default_rng(experiment.seed),
        n_boot=settings.RATER_AWARE_BOOTSTRAP_REPLICATES,
        confidence=experiment.confidence,
        horizon=experiment.n_draws,  # as the snapshot's sequences (services/refresh/estimates.py)
        labelled_draws=counts,
    )
    payload = fit.as_dict()
    if counts is not None:  # each estimate's labelled draws, as the snapshot reports them
        per_metric = labelled_draws_by_metric(judged.sample, counts, payload["estimates"])
        for name, estimate in payload["estimates"].items():
            estimate["labelled_draws"] = per_metric[name]
    return payload


def _raters_are_identifiable(rows: dict[str, np.ndarray]) -> bool:
    """Whether any pair has sure verdicts from two raters, or any gold question a sure verdict:
    without either, the model cannot learn a rater's errors (its EM would only wander)."""
    sure = rows["verdict"] != "unsure"
    if np.any(sure & (rows["gold"] != "")):
        return True
    tasks = rows["task"][sure].astype(np.int64)
    return len(tasks) > len(np.unique(tasks))


def _gold_questions(rows: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each gold pair once, with its known answer."""
    gold = rows["gold"] != ""
    seen: dict[tuple[int, int], str] = {}
    for a, b, answer in zip(rows["i"][gold].tolist(), rows["j"][gold].tolist(), rows["gold"][gold].tolist()):
        seen[(a, b)] = answer
    pairs = list(seen)
    return (
        np.array([p[0] for p in pairs], dtype=np.int64),
        np.array([p[1] for p in pairs], dtype=np.int64),
        np.array(list(seen.values()), dtype=object),
    )


def _transitivity_payload(experiment: Experiment, rows: dict[str, np.ndarray]) -> dict:
    """The report on the sampled pairs' verdicts (gold questions are not the experiment's pairs),
    items as item ids, each triangle's pairs with the sampled pair the explorer opens."""
    sampled = rows["gold"] == ""
    i, j, verdict, rater = (rows[name][sampled] for name in ("item_i", "item_j", "verdict", "rater"))
    report = transitivity_report(i=i, j=j, verdict=verdict, rater=rater)
    pair_of = _sampled_pair_ids(experiment)
    triangles = [t.as_dict() for t in report.triangles]
    for triangle in triangles:
        for pair in triangle["pairs"]:
            pair["sampled_pair"] = pair_of.get((pair["a"], pair["b"]))
    per_rater = {str(rater): [t.as_dict()["items"] for t in found] for rater, found in report.per_rater.items()}
    return {**report.counts_dict(), "triangles": triangles, "rater_triangles": per_rater}


def _sampled_pair_ids(experiment: Experiment) -> dict[tuple[str, str], int]:
    """(item id, item id), both orders → the first sampled pair of that task."""
    pair_of: dict[tuple[str, str], int] = {}
    rows = (
        SampledPair.objects.filter(experiment=experiment, task__isnull=False)
        .order_by("-pk")
        .values_list("pk", "vantage__item_id", "partner__item_id")
    )
    for pk, a, b in rows:
        pair_of[(a, b)] = pair_of[(b, a)] = pk
    return pair_of
