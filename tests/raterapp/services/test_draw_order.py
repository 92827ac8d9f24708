"""Draw order in the app (abcde-spec §14): tasks made by first draw, served in that order, and the
estimates from each batch's labelled prefix, with the verdicts that wait for it counted."""

import uuid

import numpy as np
import pytest

from metrics_core import (
    batch_order_rng,
    draw_positions,
    estimate_quality,
    labelled_prefix,
    pairs_in_draw_order,
    verdicts_from_judgements,
)
from metrics_core.estimation.labelled import labelled_draws_by_metric
from raterapp.models import Experiment, PairTask
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.estimates import estimates_refresh
from tests.raterapp.factories import make_raters
from tests.raterapp.prepared import BASE, draw_order_experiment, experiment_prepared, sample_of

pytestmark = pytest.mark.usefixtures("media")


def test_tasks_are_made_and_offered_in_first_position_order(users):
    experiment, _, sample = draw_order_experiment(users["engineer"])
    positions = draw_positions(sample, rng=batch_order_rng(seed=experiment.seed, batch=0))
    a, b = pairs_in_draw_order(sample, positions)
    tasks = PairTask.objects.filter(experiment=experiment).order_by("rank")
    assert [(t.item_a.position, t.item_b.position) for t in tasks] == list(zip(a.tolist(), b.tolist()))
    rater = make_raters(1)[0]
    offered = []
    for _ in range(5):
        task = assignment_next(experiment=experiment, rater=rater)
        offered.append((task.item_a.position, task.item_b.position))
        judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
    assert offered == list(zip(a[:5].tolist(), b[:5].tolist()))


def test_a_draw_order_snapshot_estimates_from_the_labelled_prefix_and_counts_waiting_verdicts(users):
    experiment, population, sample = draw_order_experiment(users["engineer"])
    rater, holder = make_raters(2)
    judged = []
    for k in range(12):
        if k == 4:
            # the 5th pair is leased by a rater who does not answer: the prefix stops at its first draw
            assignment_next(experiment=experiment, rater=holder)
            continue
        task = assignment_next(experiment=experiment, rater=rater)
        a, b = task.item_a.position, task.item_b.position
        verdict = "equivalent" if BASE[a] == BASE[b] else "not_equivalent"
        judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())
        judged.append((a, b, verdict))
    snapshot = estimates_refresh(experiment_id=experiment.pk)

    positions = draw_positions(sample, rng=batch_order_rng(seed=experiment.seed, batch=0))
    done = {frozenset((a, b)) for a, b, _ in judged}
    resolved = np.array([frozenset((i, j)) in done for i, j in zip(sample.i.tolist(), sample.j.tolist())])
    counts, prefix = labelled_prefix(sample, positions, resolved)
    a, b, verdict = zip(*judged)
    expected = estimate_quality(
        population,
        sample,
        verdicts_from_judgements(list(a), list(b), list(verdict)),
        confidence=experiment.confidence,
        horizon=experiment.n_draws,
        labelled_draws=counts,
    ).as_dict()
    # Each estimate reports its labelled draws, as ``estimate`` does on a PAIRS file with positions.
    per_metric = labelled_draws_by_metric(sample, counts, expected["estimates"])
    for name, estimate in expected["estimates"].items():
        estimate["labelled_draws"] = per_metric[name]
    assert snapshot.estimates["estimates"] == expected["estimates"]
    labelled_pairs = {frozenset((i, j)) for i, j, c in zip(sample.i.tolist(), sample.j.tolist(), counts) if c}
    waiting = sum(frozenset((x, y)) not in labelled_pairs for x, y, _ in judged)
    assert waiting == 7  # the verdicts after the gap
    assert snapshot.estimates["labelled"] == {
        "draws": prefix,
        "waiting_verdicts": waiting,
        "by_batch": [{"batch": 0, "prefix": prefix, "draws": 300}],
    }


def test_a_random_order_experiment_keeps_estimating_from_every_verdict(users):
    experiment = experiment_prepared(owner=users["engineer"])
    assert experiment.task_order == Experiment.TaskOrder.RANDOM
    rater = make_raters(1)[0]
    task = assignment_next(experiment=experiment, rater=rater)
    judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
    snapshot = estimates_refresh(experiment_id=experiment.pk)
    population, sample = sample_of(experiment)
    a, b = task.item_a.position, task.item_b.position
    expected = estimate_quality(
        population, sample, verdicts_from_judgements([a], [b], ["equivalent"]), confidence=experiment.confidence,
        horizon=experiment.n_draws,
    ).as_dict()  # fmt: skip
    assert snapshot.estimates["estimates"] == expected["estimates"]
    assert "labelled" not in snapshot.estimates
