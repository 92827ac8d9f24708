"""Batches and coupled sampling for experiments prepared on Dask (issue 37): the in-memory engine's rules.

* A Dask experiment draws more batches: batch ``b`` is ``dask_backend.sample_pairs`` with the stream
  ``batch_rng(seed, b)``, its pairs ordered by the batch's permutation as the command line orders them
  (``sample --engine dask --batch b``), new items appended, every pair with its vantage cell's weights;
  its estimates are metrics_core's on the whole population and the union of the batches.
* A Dask experiment of a workspace that reuses verdicts is coupled to the earlier Dask experiment's
  batch of the same index (``dask_backend.coupling.couple_sample`` with ``coupling_rng``), and so
  draws most of its pairs and reuses their verdicts; the earlier one is a coupling source.
"""

import numpy as np
import pandas as pd
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

import metrics_core as mc
from metrics_core import dask_backend as dk
from metrics_core.dask_backend.coupling import couple_sample
from metrics_core.sampling.order import positions_for_draws, rows_by_first_position
from raterapp.models import (
    Experiment,
    Item,
    Judgement,
    OutboxMessage,
    PairTask,
    ReusedVerdict,
    SampleBatch,
    SampledPair,
)
from raterapp.selectors.samples import judged_sample_get
from raterapp.services import outbox
from raterapp.services.preparation.pipeline import experiment_prepare
from raterapp.services.sampling.batches import sample_batch_draw, sample_batch_request
from tests.metrics_core.dask_run import write_parts
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.preparation import prepared
from tests.raterapp.helpers.reuse import keys_of
from tests.raterapp.services.files import experiment_made, parquet_bytes, random_files, upload

Status = Experiment.Status
pytestmark = pytest.mark.usefixtures("media")
N = 400


def population_frame(seed=3, moved=0.0):
    """N weighted items; ``moved`` of them in another Exp cluster (a later variant of the change)."""
    rng = np.random.default_rng(seed)
    gold = np.arange(N) // 4
    base = np.where(rng.random(N) < 0.2, gold + 1000, gold // 2)
    exp = np.where(rng.random(N) < 0.5, gold + 5000, base)
    exp = np.where(np.random.default_rng(99).random(N) < moved, gold + 7000, exp)
    frame = pd.DataFrame(
        {
            "item_id": [f"p{k:04d}" for k in range(N)],
            "base_cluster": base,
            "exp_cluster": exp,
            "weight": rng.uniform(0.5, 2.0, N),
        }
    )
    return frame


def catalogue(frame):
    return upload("catalogue.csv", "item_id,title\n" + "".join(f"{i},Item {i}\n" for i in frame["item_id"]))


def on_dask(engineer, settings, tmp_path, frame, name, **params):
    """An experiment of the items ``frame`` at a location, prepared on Dask (the worker's local scheduler)."""
    folder = write_parts(frame, tmp_path / "data" / name, 3)
    settings.DATA_LOCATIONS = [str(tmp_path / "data") + "/"]
    settings.DASK_SCHEDULER_ADDRESS = ""
    experiment = experiment_made(
        owner=engineer, name=name, files={"catalogue": catalogue(frame)}, items_location=str(folder), **params
    )
    assert experiment.engine == Experiment.Engine.DASK
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert experiment.status == Status.RATING, experiment.error
    return experiment, dk.read_items(str(folder))


def batch_drawn(experiment, actor, draws, django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setitem(outbox.EFFECTS, OutboxMessage.Kind.SAMPLE_BATCH_DRAW, lambda _: None)
    with django_capture_on_commit_callbacks(execute=True):
        batch = sample_batch_request(experiment=experiment, actor=actor, draws=draws)
    sample_batch_draw(batch_id=batch.pk)
    batch.refresh_from_db()
    assert batch.status == SampleBatch.Status.DONE, batch.error
    return batch


def judge_all(experiment):
    """One verdict on every task, by the items' true clusters (four items each)."""
    rater = UserFactory(roles=["rater"])
    tasks = list(PairTask.objects.filter(experiment=experiment).select_related("item_a", "item_b"))
    Judgement.objects.bulk_create(
        Judgement(
            task=task,
            rater=rater,
            client_id=f"00000000-0000-0000-0000-{k:012d}",
            verdict="equivalent" if task.item_a.item_id[1:4] == task.item_b.item_id[1:4] else "not_equivalent",
        )
        for k, task in enumerate(tasks)
    )
    PairTask.objects.filter(pk__in=[task.pk for task in tasks]).update(verdicts=1)


def stored_positions(experiment, batch: int) -> dict:
    """``{(i id, j id): positions}`` of the pairs the batch drew."""
    rows = SampledPair.objects.filter(experiment=experiment).values_list(
        "vantage__item_id", "partner__item_id", "positions"
    )
    return {(i, j): positions[str(batch)] for i, j, positions in rows if str(batch) in positions}


def command_line_positions(pairs: pd.DataFrame, *, seed: int, batch: int) -> dict:
    """What ``sample --engine dask --seed K --batch B`` writes of these pairs: each row's positions."""
    draws = pairs["draws"].to_numpy(np.int64)
    order, positions = rows_by_first_position(
        draws, positions_for_draws(draws, rng=mc.batch_order_rng(seed=seed, batch=batch))
    )
    offsets = np.concatenate(([0], np.cumsum(draws[order])))
    rows = pairs.iloc[order]
    return {
        (i, j): positions[offsets[k] : offsets[k + 1]].tolist() for k, (i, j) in enumerate(zip(rows["i"], rows["j"]))
    }


def test_a_dask_experiment_draws_more_batches_by_the_in_memory_rules(
    engineer, settings, tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    frame = population_frame()
    experiment, items = on_dask(engineer, settings, tmp_path, frame, "d", n_draws=300, seed=5)
    items_before = Item.objects.filter(experiment=experiment).count()
    # The page offers the batch form, the API plans and accepts the batch (all three refused Dask before).
    page = Client()
    page.force_login(engineer)
    assert "data-batch-form" in page.get(reverse("experiment-detail", args=[experiment.pk])).content.decode()
    client = APIClient()
    client.force_authenticate(engineer)
    url = f"/api/experiments/{experiment.pk}/batches/"
    assert client.get(f"{url}plan/", {"draws": 250}).status_code == 200
    monkeypatch.setitem(outbox.EFFECTS, OutboxMessage.Kind.SAMPLE_BATCH_DRAW, lambda _: None)
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(url, {"draws": 250}, format="json")
    assert answer.status_code == 202, answer.json()
    sample_batch_draw(batch_id=answer.json()["id"])
    batch = SampleBatch.objects.get(experiment=experiment, index=1)
    assert (batch.status, batch.draws, batch.coupled_to_id) == (SampleBatch.Status.DONE, 250, None), batch.error
    assert client.get(url).json()["batches"][1]["status"] == "done"

    pairs = dk.sample_pairs(items, n_draws=250, scheme="jaccard", rng=mc.batch_rng(seed=5, batch=1))
    assert stored_positions(experiment, 1) == command_line_positions(pairs, seed=5, batch=1)
    first = dk.sample_pairs(items, n_draws=300, scheme="jaccard", rng=mc.batch_rng(seed=5, batch=0))
    assert stored_positions(experiment, 0) == command_line_positions(first, seed=5, batch=0)
    assert batch.new_pairs > 0 and batch.repeated_pairs > 0
    assert Item.objects.filter(experiment=experiment).count() > items_before
    assert sorted(Item.objects.filter(experiment=experiment).values_list("position", flat=True)) == list(
        range(Item.objects.filter(experiment=experiment).count())
    )
    assert not SampledPair.objects.filter(experiment=experiment, vantage_union__isnull=True).exists()
    new_tasks = PairTask.objects.filter(experiment=experiment).order_by("rank")
    assert new_tasks.count() == PairTask.objects.filter(experiment=experiment).values("rank").distinct().count()

    # The estimates read the union of the batches and its context, which are the population's.
    judged = judged_sample_get(experiment=Experiment.objects.get(pk=experiment.pk))
    population = mc.population_from_labels(frame["base_cluster"], frame["exp_cluster"], frame["weight"])
    ids = dict(Item.objects.filter(experiment=experiment).values_list("position", "item_id"))
    at = {item: k for k, item in enumerate(frame["item_id"])}
    to_population = np.vectorize(lambda p: at[ids[p]])
    sample = judged.sample
    union = mc.PairSample.from_columns(
        population, scheme="jaccard", i=to_population(sample.i), j=to_population(sample.j), draws=sample.draws,
        pair_class=sample.pair_class, stratum=sample.stratum,
    )  # fmt: skip
    assert union.n_draws == 550
    expected = mc.concatenate_samples(
        [mc.PairSample.from_columns(population, scheme="jaccard", i=[at[v] for v in p["i"]], j=[at[v] for v in p["j"]],
                                    draws=p["draws"]) for p in (first, pairs)]
    )  # fmt: skip
    key = lambda s: sorted(zip(s.i.tolist(), s.j.tolist(), s.draws.tolist()))  # noqa: E731
    assert key(union) == key(expected)
    rng = np.random.default_rng(0)
    a, b = mc.pairs_for_judgement(sample, rng=rng)
    said = rng.choice(["equivalent", "not_equivalent"], len(a))
    ours = mc.estimate_quality(judged.source, sample, mc.verdicts_from_judgements(a, b, said)).as_dict()
    theirs = mc.estimate_quality(
        population, union, mc.verdicts_from_judgements(to_population(a), to_population(b), said)
    ).as_dict()
    for name, estimate in theirs["estimates"].items():
        for field, value in estimate.items():
            assert ours["estimates"][name][field] == (
                None if value is None else pytest.approx(value, rel=1e-9, abs=1e-12)
            ), (name, field)


def test_dask_experiments_are_coupled_and_coupling_sources(
    engineer, settings, tmp_path, django_capture_on_commit_callbacks, monkeypatch
):
    frame = population_frame()
    first, first_items = on_dask(engineer, settings, tmp_path, frame, "first", n_draws=300, seed=1, workspace="w")
    judge_all(first)

    # A later experiment of the workspace prepared in memory is no coupling source for a Dask one.
    in_memory = prepared(engineer, files=random_files(tmp_path)[0], workspace="w", n_draws=300, seed=3)
    assert in_memory.engine == Experiment.Engine.MEMORY
    second_frame = population_frame(moved=0.1)
    second, items = on_dask(engineer, settings, tmp_path, second_frame, "second", n_draws=300, seed=2, workspace="w")
    record = SampleBatch.objects.get(experiment=second, index=0)
    assert record.coupled_to_id == first.pk and 0.5 * 300 < record.coupled_kept < 300
    source = dk.sample_pairs(first_items, n_draws=300, scheme="jaccard", rng=mc.batch_rng(seed=1, batch=0))
    coupled = couple_sample(
        items, n_draws=300, scheme="jaccard", rng=mc.coupling_rng(seed=2, batch=0, source=first.pk),
        source_items=first_items, source_pairs=source,
    )  # fmt: skip
    assert coupled.kept == record.coupled_kept
    assert stored_positions(second, 0) == command_line_positions(coupled.pairs, seed=2, batch=0)
    shared = keys_of(first) & keys_of(second)
    assert len(shared) > 0.6 * len(keys_of(second))
    reused = ReusedVerdict.objects.filter(experiment=second).count()
    assert reused == len(shared) and reused > 0.5 * PairTask.objects.filter(experiment=second).count()

    # Later batches couple with the earlier experiment's batch of their index.
    batch_drawn(first, engineer, 200, django_capture_on_commit_callbacks, monkeypatch)
    later = batch_drawn(second, engineer, 200, django_capture_on_commit_callbacks, monkeypatch)
    assert later.coupled_to_id == first.pk and later.coupled_kept > 100
    source = dk.sample_pairs(first_items, n_draws=200, scheme="jaccard", rng=mc.batch_rng(seed=1, batch=1))
    coupled = couple_sample(
        items, n_draws=200, scheme="jaccard", rng=mc.coupling_rng(seed=2, batch=1, source=first.pk),
        source_items=first_items, source_pairs=source,
    )  # fmt: skip
    assert stored_positions(second, 1) == command_line_positions(coupled.pairs, seed=2, batch=1)


def test_a_dask_experiment_of_an_items_upload_draws_a_batch(
    engineer, settings, django_capture_on_commit_callbacks, monkeypatch
):
    frame = population_frame(seed=4)
    settings.DASK_SCHEDULER_ADDRESS = ""
    settings.DASK_THRESHOLD_BYTES = 1000  # this upload is "large": prepared on Dask
    files = {"items": upload("items.parquet", parquet_bytes(frame.to_dict("list"))), "catalogue": catalogue(frame)}
    experiment = experiment_made(owner=engineer, name="upload", files=files, n_draws=200, seed=2)
    assert experiment.engine == Experiment.Engine.DASK
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert experiment.status == Status.RATING, experiment.error
    batch = batch_drawn(experiment, engineer, 150, django_capture_on_commit_callbacks, monkeypatch)
    assert batch.new_pairs > 0
    titles = Item.objects.filter(experiment=experiment).values_list("item_id", "title")
    assert all(title == f"Item {item}" for item, title in titles)
    assert sum(SampledPair.objects.filter(experiment=experiment).values_list("draws", flat=True)) == 350
