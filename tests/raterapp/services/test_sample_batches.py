"""More draws for an experiment (abcde-spec §10): batches appended to the sample, all or nothing."""

import uuid

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from metrics_core import (
    PAIR_CLASSES,
    STRATA,
    batch_order_rng,
    batch_rng,
    concatenate_samples,
    draw_positions,
    estimate_quality,
    pairs_in_draw_order,
    sample_pairs,
    verdicts_from_judgements,
)
from metrics_core.io import read_items
from raterapp.models import Experiment, Item, Judgement, OutboxMessage, PairTask, SampleBatch, SampledPair
from raterapp.selectors import batches as batch_limits
from raterapp.selectors.samples import judged_sample_get
from raterapp.services import outbox
from raterapp.services.sampling import batches as sample_batches
from raterapp.services.sampling.batches import sample_batch_draw, sample_batch_request
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.preparation import prepared
from tests.raterapp.services.files import random_files

Status = Experiment.Status


@pytest.fixture
def enqueued(monkeypatch):
    """The batches the service asked the worker to draw (the test draws them itself)."""
    asked = []
    monkeypatch.setitem(outbox.EFFECTS, OutboxMessage.Kind.SAMPLE_BATCH_DRAW, asked.append)
    return asked


def drawn(experiment, owner, draws, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        batch = sample_batch_request(experiment=experiment, actor=owner, draws=draws)
    sample_batch_draw(batch_id=batch.pk)
    batch.refresh_from_db()
    experiment.refresh_from_db()
    return batch


def sample_rows(experiment):
    """Sampled pairs as (i id, j id, class, stratum, draws), sorted."""
    return sorted(
        SampledPair.objects.filter(experiment=experiment).values_list(
            "vantage__item_id", "partner__item_id", "pair_class", "stratum", "draws"
        )
    )


def expected_rows(ids, sample):
    return sorted(
        (ids[i], ids[j], PAIR_CLASSES[c], STRATA[s], d)
        for i, j, c, s, d in zip(
            sample.i.tolist(), sample.j.tolist(), sample.pair_class, sample.stratum, sample.draws.tolist()
        )
    )


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_batches_append_the_metrics_core_batches_of_the_seed(
    engineer, media, tmp_path, enqueued, django_capture_on_commit_callbacks, scheme
):
    files, items_path = random_files(tmp_path)
    experiment = prepared(engineer, files=files, scheme=scheme, n_draws=400, diff_share=0.3, seed=11, replication=2)
    tasks_before = list(
        PairTask.objects.filter(experiment=experiment).order_by("rank").values_list("rank", "item_a", "item_b")
    )

    first = drawn(experiment, engineer, 300, django_capture_on_commit_callbacks)
    second = drawn(experiment, engineer, 250, django_capture_on_commit_callbacks)

    assert enqueued == [first.pk, second.pk]
    assert [(b.index, b.draws, b.status) for b in SampleBatch.objects.filter(experiment=experiment)] == [
        (0, 400, "done"),
        (1, 300, "done"),
        (2, 250, "done"),
    ]
    assert experiment.sample_version == 2
    items = read_items(items_path)
    population = items.to_population()
    ids = np.asarray(items.item_id.to_pylist(), dtype=object)
    batches = [
        sample_pairs(population, n_draws=n, scheme=scheme, rng=batch_rng(seed=11, batch=b), diff_share=0.3)
        for b, n in enumerate((400, 300, 250))
    ]
    union = concatenate_samples(batches)
    assert sample_rows(experiment) == expected_rows(ids, union)
    assert sum(r[4] for r in sample_rows(experiment)) == 950

    # Old tasks keep their ranks; each batch's new pairs follow in its own random order.
    tasks = list(
        PairTask.objects.filter(experiment=experiment).order_by("rank").values_list("rank", "item_a", "item_b")
    )
    assert tasks[: len(tasks_before)] == tasks_before
    seen = {(ids[a], ids[b]) for a, b in zip(*in_draw_order(batches[0], batch_order_rng(seed=11, batch=0)))}
    expected_new = []
    for b in (1, 2):
        for a, c in zip(*in_draw_order(batches[b], batch_order_rng(seed=11, batch=b))):
            key = (ids[a], ids[c])
            if key not in seen:
                seen.add(key)
                expected_new.append(key)
    stored = list(
        PairTask.objects.filter(experiment=experiment, rank__gte=len(tasks_before))
        .order_by("rank")
        .values_list("item_a__item_id", "item_b__item_id", "wanted")
    )
    assert stored == [(a, c, 2) for a, c in expected_new]
    assert [t[0] for t in tasks] == list(range(len(tasks)))
    assert first.new_tasks + second.new_tasks == len(expected_new)
    # Every sampled item has one Item row; every non-self pair its task.
    assert Item.objects.filter(experiment=experiment).count() == len(np.unique(np.concatenate([union.i, union.j])))
    assert not SampledPair.objects.filter(experiment=experiment, task=None).exclude(pair_class="self").exists()


def test_estimates_after_a_top_up_are_metrics_core_on_the_concatenated_batches(
    engineer, media, tmp_path, enqueued, django_capture_on_commit_callbacks
):
    files, items_path = random_files(tmp_path)
    experiment = prepared(engineer, files=files, n_draws=300, seed=3)
    drawn(experiment, engineer, 300, django_capture_on_commit_callbacks)
    rater = UserFactory(roles=["rater"])
    items = read_items(items_path)
    population = items.to_population()
    truth = np.random.default_rng(0).random(population.n_items) < 0.5  # a verdict per item pair, fixed
    tasks = list(PairTask.objects.filter(experiment=experiment).select_related("item_a", "item_b"))
    Judgement.objects.bulk_create(
        Judgement(
            task=t,
            rater=rater,
            client_id=f"00000000-0000-0000-0000-{k:012d}",
            verdict="equivalent" if truth[t.item_a.position] == truth[t.item_b.position] else "not_equivalent",
        )
        for k, t in enumerate(tasks)
    )
    judged = judged_sample_get(experiment=Experiment.objects.get(pk=experiment.pk))
    union = concatenate_samples(
        [sample_pairs(population, n_draws=300, scheme="jaccard", rng=batch_rng(seed=3, batch=b)) for b in (0, 1)]
    )
    a = np.array([t.item_a.position for t in tasks])
    b = np.array([t.item_b.position for t in tasks])
    verdicts = verdicts_from_judgements(a, b, np.where(truth[a] == truth[b], "equivalent", "not_equivalent"))
    ours = estimate_quality(judged.source, judged.sample, judged.verdicts, horizon=300).as_dict()["estimates"]
    theirs = estimate_quality(population, union, verdicts, horizon=300).as_dict()["estimates"]
    assert ours.keys() == theirs.keys()
    for name, estimate in theirs.items():  # rows come in another order: sums agree to rounding
        assert ours[name] == pytest.approx(estimate, rel=1e-12, abs=1e-15, nan_ok=True), name
    assert ours["GoodMergeDistance"]["drawn_draws"] > 0


def test_a_batch_is_refused_before_rating_past_the_limits_and_while_one_is_drawn(engineer, media, tmp_path, enqueued):
    files, _ = random_files(tmp_path)
    experiment = prepared(engineer, files=files, n_draws=100)
    for draws in (0, -1, batch_limits.MAX_BATCH_DRAWS + 1, 2.5):
        with pytest.raises(ValidationError, match="whole number of draws"):
            sample_batch_request(experiment=experiment, actor=engineer, draws=draws)
    sample_batch_request(experiment=experiment, actor=engineer, draws=10)
    with pytest.raises(ValidationError, match="being drawn"):
        sample_batch_request(experiment=experiment, actor=engineer, draws=10)
    assert SampleBatch.objects.filter(experiment=experiment).count() == 2

    # (Experiments prepared on Dask draw batches too: test_dask_batches.py.)
    Experiment.objects.filter(pk=experiment.pk).update(status=Status.SAMPLING)
    experiment.refresh_from_db()
    with pytest.raises(ValidationError, match="once the experiment is prepared"):
        sample_batch_request(experiment=experiment, actor=engineer, draws=10)


def test_the_total_draws_are_capped(engineer, media, tmp_path, enqueued, monkeypatch):
    files, _ = random_files(tmp_path)
    experiment = prepared(engineer, files=files, n_draws=100)
    monkeypatch.setattr(batch_limits, "MAX_TOTAL_DRAWS", 150)
    with pytest.raises(ValidationError, match="ask for at most 50"):
        sample_batch_request(experiment=experiment, actor=engineer, draws=51)
    assert sample_batch_request(experiment=experiment, actor=engineer, draws=50).draws == 50


def test_drawing_twice_changes_nothing_and_a_failure_leaves_the_sample_untouched(
    engineer, media, tmp_path, enqueued, django_capture_on_commit_callbacks, monkeypatch
):
    files, _ = random_files(tmp_path)
    experiment = prepared(engineer, files=files, n_draws=200)
    before = sample_rows(experiment)
    batch = drawn(experiment, engineer, 200, django_capture_on_commit_callbacks)
    after = sample_rows(experiment)
    sample_batch_draw(batch_id=batch.pk)  # a redelivered task
    assert sample_rows(experiment) == after != before

    def broken(batch):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(sample_batches, "_batch_rows_build", broken)
    failed = drawn(experiment, engineer, 100, django_capture_on_commit_callbacks)
    assert failed.status == "failed"
    assert "unexpected error" in failed.error and "error id" in failed.error
    assert sample_rows(experiment) == after
    assert experiment.sample_version == 1
    # Asking again draws the next index afresh.
    monkeypatch.undo()
    again = drawn(experiment, engineer, 100, django_capture_on_commit_callbacks)
    assert (again.index, again.status) == (3, "done")


def test_a_stale_drawing_batch_is_queued_again_not_duplicated(
    engineer, media, tmp_path, enqueued, django_capture_on_commit_callbacks, clock
):
    files, _ = random_files(tmp_path)
    experiment = prepared(engineer, files=files, n_draws=100)
    with django_capture_on_commit_callbacks(execute=True):
        first = sample_batch_request(experiment=experiment, actor=engineer, draws=10)
    clock.advance(sample_batches.STALE_AFTER.total_seconds() + 1)
    with django_capture_on_commit_callbacks(execute=True):
        again = sample_batch_request(experiment=experiment, actor=engineer, draws=10)
    assert again.pk == first.pk
    assert enqueued == [first.pk, first.pk]


def test_the_stored_new_pair_share_is_metrics_core_s_on_the_sample(
    engineer, media, tmp_path, enqueued, django_capture_on_commit_callbacks
):
    from metrics_core.growth import new_pair_share
    from raterapp.selectors.batches import sample_batch_plan_get, sample_new_pair_share

    files, items_path = random_files(tmp_path)
    experiment = prepared(engineer, files=files, n_draws=500, seed=5)
    drawn(experiment, engineer, 300, django_capture_on_commit_callbacks)
    population = read_items(items_path).to_population()
    union = concatenate_samples(
        [sample_pairs(population, n_draws=n, rng=batch_rng(seed=5, batch=b)) for b, n in enumerate((500, 300))]
    )
    assert sample_new_pair_share(experiment=experiment) == pytest.approx(new_pair_share(union), rel=1e-12)
    plan = sample_batch_plan_get(experiment=experiment, draws=1000)
    assert plan["new_pairs"] == pytest.approx(1000 * new_pair_share(union))
    assert (plan["sample_draws"], plan["budget_left"], plan["within_budget"]) == (800, None, None)


def in_draw_order(sample, rng):
    """New experiments make tasks in draw order (abcde-spec §14)."""
    return pairs_in_draw_order(sample, draw_positions(sample, rng=rng))


def test_a_repeated_request_id_returns_the_batch_it_asked_for(
    engineer, media, tmp_path, enqueued, django_capture_on_commit_callbacks
):
    """Ten identical requests (a double click, retries after a lost answer) once drew 3 batches: each
    came after the one before was drawn. With the client's request id they draw one."""
    files, _ = random_files(tmp_path)
    experiment = prepared(engineer, files=files, n_draws=100)
    request_id = uuid.uuid4()
    batches = []
    for _ in range(10):
        with django_capture_on_commit_callbacks(execute=True):
            batch = sample_batch_request(experiment=experiment, actor=engineer, draws=10, request_id=request_id)
        sample_batch_draw(batch_id=batch.pk)  # drawn before the next request arrives
        batches.append(batch.pk)
    assert len(set(batches)) == 1 and SampleBatch.objects.filter(experiment=experiment).count() == 2
    assert len(enqueued) == 1
    other = sample_batch_request(experiment=experiment, actor=engineer, draws=10, request_id=uuid.uuid4())
    assert other.pk != batches[0] and other.index == 2
