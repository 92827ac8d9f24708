"""Coupled sampling in a workspace (abcde-spec §11, issue 19): a second experiment that reuses verdicts
draws the pairs the first drew as often as its own distribution allows, its sample is
``metrics_core.sample_coupled`` reproduced from the seeds, and its estimates are metrics_core's on it."""

import logging

import numpy as np
import pytest

from metrics_core import (
    batch_rng,
    concatenate_samples,
    coupling_rng,
    estimate_quality,
    sample_coupled,
    sample_pairs,
    verdicts_from_judgements,
)
from metrics_core.io import read_items
from raterapp.models import Experiment, OutboxMessage, PairTask, SampleBatch
from raterapp.reuse_keys import pair_key
from raterapp.selectors.reuse import experiment_reuse_get
from raterapp.selectors.samples import judged_sample_get
from raterapp.services import outbox
from raterapp.services.sampling import coupled as coupled_sampling
from raterapp.services.sampling.batches import sample_batch_draw, sample_batch_request
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.preparation import prepared
from tests.raterapp.helpers.reuse import judge_all, keys_of, verdict_of
from tests.raterapp.services.files import random_files, upload

DRAWS = 400


def variant_files(tmp_path, *, share: float = 0.1):
    """The random population with ``share`` of the items moved to another Exp cluster (a changed Exp)."""
    files, items_path = random_files(tmp_path)
    rng = np.random.default_rng(11)
    lines = open(items_path).read().splitlines()
    for k in range(1, len(lines)):
        if rng.random() < share:
            item, base, _ = lines[k].split(",")
            lines[k] = f"{item},{base},e{rng.integers(0, 50)}"
    path = tmp_path / "items-2.csv"
    path.write_text("\n".join(lines) + "\n")
    return {**files, "items": upload("items.csv", path.read_text())}, str(path)


def experiment_in(engineer, files, **params) -> Experiment:
    return prepared(engineer, files=files, **{"workspace": "w", "n_draws": DRAWS, **params})


def ids_of(path: str) -> np.ndarray:
    return np.array([line.split(",")[0] for line in open(path).read().splitlines()[1:]], dtype=object)


def pair_keys(ids: np.ndarray, sample) -> set[str]:
    return {pair_key(ids[i], ids[j]) for i, j in zip(sample.i.tolist(), sample.j.tolist()) if i != j}


def test_a_second_experiment_draws_most_of_the_first_ones_pairs_and_estimates_on_its_own_sample(
    engineer, media, tmp_path, truth
):
    files, first_path = random_files(tmp_path)
    first = experiment_in(engineer, files, seed=1)
    rater = UserFactory(roles=["rater"])
    judge_all(first, rater, truth)
    files2, second_path = variant_files(tmp_path)
    second = experiment_in(engineer, files2, seed=2)

    shared = keys_of(first) & keys_of(second)
    population, population2 = read_items(first_path).to_population(), read_items(second_path).to_population()
    ordinary = sample_pairs(population2, n_draws=DRAWS, scheme="jaccard", rng=batch_rng(seed=2, batch=0))
    independent = keys_of(first) & pair_keys(ids_of(second_path), ordinary)
    # The coupled draws depend on first.pk (coupling_rng's source), which the database gives: over
    # sources 1-400 the shared share ran 0.69-0.81 (median 0.75); drawn independently it is 0.21.
    assert len(shared) / len(keys_of(second)) > 0.6 > 0.4 > len(independent) / len(pair_keys(ids_of(second_path), ordinary))
    batch = SampleBatch.objects.get(experiment=second, index=0)
    assert batch.coupled_to_id == first.pk and 0.6 * DRAWS < batch.coupled_kept < DRAWS
    assert SampleBatch.objects.get(experiment=first, index=0).coupled_to_id is None
    assert experiment_reuse_get(experiment=second)["coupled_to"] == {
        "id": first.pk, "name": first.name, "kept": batch.coupled_kept, "draws": DRAWS,
    }  # fmt: skip

    # The stored sample is metrics_core's coupled sample, reproduced from the seeds.
    earlier = sample_pairs(population, n_draws=DRAWS, scheme="jaccard", rng=batch_rng(seed=1, batch=0))
    sample = sample_coupled(
        population2, n_draws=DRAWS, scheme="jaccard", rng=coupling_rng(seed=2, batch=0, source=first.pk),
        source_population=population, source_sample=earlier,
        item_ids=ids_of(second_path), source_item_ids=ids_of(first_path),
    )  # fmt: skip
    judge_all(second, rater, truth, start=10_000)
    judged = judged_sample_get(experiment=Experiment.objects.get(pk=second.pk))
    stored = dict(zip(zip(judged.sample.i.tolist(), judged.sample.j.tolist()), judged.sample.draws.tolist()))
    assert stored == dict(zip(zip(sample.i.tolist(), sample.j.tolist()), sample.draws.tolist()))

    # Its estimates are metrics_core's on that sample with the verdicts of both experiments.
    pairs = list(PairTask.objects.filter(experiment=second).values_list("item_a__position", "item_b__position"))
    a, b = (np.array(c) for c in zip(*pairs))
    verdicts = verdicts_from_judgements(a, b, np.array([verdict_of(truth, x, y) for x, y in pairs], dtype=object))
    ours = estimate_quality(judged.source, judged.sample, judged.verdicts, horizon=DRAWS).as_dict()["estimates"]
    theirs = estimate_quality(population2, concatenate_samples([sample]), verdicts, horizon=DRAWS).as_dict()["estimates"]
    for name, estimate in theirs.items():
        assert ours[name] == pytest.approx(estimate, rel=1e-12, abs=1e-15, nan_ok=True), name


def test_a_later_batch_couples_with_the_earlier_experiments_batch_of_its_index(
    engineer, media, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setitem(outbox.EFFECTS, OutboxMessage.Kind.SAMPLE_BATCH_DRAW, lambda batch_id: None)
    files, _ = random_files(tmp_path)
    first = experiment_in(engineer, files, seed=1)
    files2, _ = variant_files(tmp_path)
    second = experiment_in(engineer, files2, seed=2)
    drawn = {}
    for experiment in (first, second):  # the first's batch 1 exists once the second asks for its own
        with django_capture_on_commit_callbacks(execute=True):
            batch = sample_batch_request(experiment=experiment, actor=engineer, draws=300)
        sample_batch_draw(batch_id=batch.pk)
        drawn[experiment.pk] = SampleBatch.objects.get(pk=batch.pk)
    assert drawn[first.pk].coupled_to_id is None
    assert (drawn[second.pk].status, drawn[second.pk].coupled_to_id) == ("done", first.pk)
    assert drawn[second.pk].coupled_kept > 0.6 * 300


def test_a_third_experiment_couples_to_the_second_whose_sample_is_drawn_again_through_the_first(
    engineer, media, tmp_path, caplog
):
    files, _ = random_files(tmp_path)
    first = experiment_in(engineer, files, seed=1)
    files2, _ = variant_files(tmp_path)
    second = experiment_in(engineer, files2, seed=2)
    with caplog.at_level(logging.WARNING, logger=coupled_sampling.__name__):
        third = experiment_in(engineer, variant_files(tmp_path, share=0.15)[0], seed=3)
    assert "not coupled" not in caplog.text
    coupled = dict(SampleBatch.objects.filter(index=0).values_list("experiment_id", "coupled_to_id"))
    assert coupled == {first.pk: None, second.pk: first.pk, third.pk: second.pk}
    assert len(keys_of(second) & keys_of(third)) > 0.6 * len(keys_of(third))


@pytest.mark.parametrize(
    "change", [{"scheme": "precision"}, {"question": "Same product?"}, {"reuse_verdicts": False}, {"workspace": "x"}]
)
def test_no_coupling_across_schemes_questions_workspaces_or_without_reuse(engineer, media, tmp_path, change):
    files, _ = random_files(tmp_path)
    experiment_in(engineer, files, seed=1)
    files2, _ = variant_files(tmp_path)
    second = experiment_in(engineer, files2, **{"seed": 2, **change})
    assert SampleBatch.objects.get(experiment=second, index=0).coupled_to_id is None
    assert experiment_reuse_get(experiment=second)["coupled_to"] is None


def test_an_earlier_sample_that_does_not_reproduce_falls_back_to_the_ordinary_sampler(
    engineer, media, tmp_path, caplog
):
    files, _ = random_files(tmp_path)
    first = experiment_in(engineer, files, seed=1)
    Experiment.objects.filter(pk=first.pk).update(seed=99)  # its stored pairs no longer match its seed
    files2, second_path = variant_files(tmp_path)
    with caplog.at_level(logging.WARNING, logger=coupled_sampling.__name__):
        second = experiment_in(engineer, files2, seed=2)
    assert second.status == Experiment.Status.RATING
    assert SampleBatch.objects.get(experiment=second, index=0).coupled_to_id is None
    assert f"not coupled to experiment {first.pk}" in caplog.text
    ordinary = sample_pairs(read_items(second_path).to_population(), n_draws=DRAWS, scheme="jaccard", rng=batch_rng(seed=2, batch=0))
    judged = judged_sample_get(experiment=second)
    assert sorted(zip(judged.sample.i.tolist(), judged.sample.j.tolist(), judged.sample.draws.tolist())) == sorted(
        zip(ordinary.i.tolist(), ordinary.j.tolist(), ordinary.draws.tolist())
    )
