"""Rater-aware estimates of a draw-order experiment (abcde-spec §13 with §14): the worker
estimates from each batch's labelled prefix, as the snapshot does, and the verdicts that wait
beyond it move nothing."""

import uuid

import numpy as np
import pytest

from metrics_core import batch_order_rng, draw_positions, estimate_quality_rater_aware, labelled_prefix
from metrics_core.estimation.labelled import labelled_draws_by_metric
from raterapp.models import Experiment, Judgement, PairTask
from raterapp.selectors.samples import judged_sample_get
from raterapp.services.refresh.estimates import estimates_refresh
from raterapp.services.refresh.rater_aware import rater_aware_refresh
from tests.raterapp.factories import make_raters
from tests.raterapp.prepared import BASE, draw_order_experiment

pytestmark = pytest.mark.usefixtures("no_pending_keys", "media")


def judge(task, rater, *, wrong=False):
    """A verdict from BASE (the opposite with ``wrong``), stored as the judging service stores it."""
    a, b = task.item_a.position, task.item_b.position
    same = (BASE[a] == BASE[b]) != wrong
    verdict = "equivalent" if same else "not_equivalent"
    Judgement.objects.create(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
    return a, b, verdict, rater.pk


def test_a_draw_order_experiment_s_rater_aware_estimates_use_the_labelled_prefix(users, settings):
    settings.RATER_AWARE_BOOTSTRAP_REPLICATES = 40
    experiment, population, sample = draw_order_experiment(users["engineer"])
    # Its sequences are tuned to the draws planned at creation, as the snapshot's, whatever the
    # sample holds now (batches added since): planned here as three times the sample.
    Experiment.objects.filter(pk=experiment.pk).update(n_draws=3 * sample.n_draws)
    experiment.refresh_from_db()
    ann, bob = make_raters(2)
    tasks = list(PairTask.objects.filter(experiment=experiment).order_by("rank")[:24])
    # Two raters on each of the first 24 tasks but the 13th (leased, never answered): the prefix
    # stops at its first draw and the verdicts on the 11 tasks after it wait. Bob errs on every 4th.
    rows = []
    for k, task in enumerate(tasks):
        if k == 12:
            continue
        rows.append(judge(task, ann))
        rows.append(judge(task, bob, wrong=k % 4 == 3))
    stored = rater_aware_refresh(experiment_id=experiment.pk)
    assert stored.error == ""

    positions = draw_positions(sample, rng=batch_order_rng(seed=experiment.seed, batch=0))
    done = {frozenset((a, b)) for a, b, _, _ in rows}
    resolved = np.array([frozenset((i, j)) in done for i, j in zip(sample.i.tolist(), sample.j.tolist())])
    counts, prefix = labelled_prefix(sample, positions, resolved)
    assert 0 < prefix < sample.n_draws
    # The app holds the sample's rows sorted by first position: the same counts, row for row.
    stored_sample = judged_sample_get(experiment=experiment).sample
    row_of = {(i, j): r for r, (i, j) in enumerate(zip(sample.i.tolist(), sample.j.tolist()))}
    counts = counts[[row_of[(i, j)] for i, j in zip(stored_sample.i.tolist(), stored_sample.j.tolist())]]
    a, b, verdict, rater = (np.array(column) for column in zip(*rows))
    args = dict(
        i=a,
        j=b,
        verdict=verdict.astype(object),
        rater=rater.astype(np.int64),
        n_boot=40,
        confidence=experiment.confidence,
        horizon=experiment.n_draws,
    )
    expected = estimate_quality_rater_aware(
        population, stored_sample, rng=np.random.default_rng(experiment.seed), labelled_draws=counts, **args
    ).as_dict()
    per_metric = labelled_draws_by_metric(stored_sample, counts, expected["estimates"])
    for name, estimate in expected["estimates"].items():
        estimate["labelled_draws"] = per_metric[name]
    assert stored.payload == expected
    assert [r["verdicts"] for r in stored.payload["raters"]] == [12, 12]  # the waiting verdicts are not fitted
    # Every draw would give other numbers: the prefix is what the worker used.
    every = estimate_quality_rater_aware(population, stored_sample, rng=np.random.default_rng(experiment.seed), **args)
    judged_draws = stored.payload["estimates"]["DeltaPrecision"]["judged_draws"]
    assert every.quality["DeltaPrecision"].judged_draws > judged_draws
    # The judged draws are those of the snapshot's human-only estimates, both from the prefix.
    snapshot = estimates_refresh(experiment_id=experiment.pk).estimates
    for name, estimate in stored.payload["estimates"].items():
        assert estimate["judged_draws"] == snapshot["estimates"][name]["judged_draws"], name
        assert estimate["labelled_draws"] == snapshot["estimates"][name]["labelled_draws"], name
    assert snapshot["labelled"]["draws"] == prefix
