"""Verdict reuse in a workspace (abcde-spec §11): a sampled pair judged in another experiment of
the workspace, under the same question version, is answered by those verdicts."""

from decimal import Decimal

import numpy as np
import pytest

from metrics_core import batch_rng, concatenate_samples, estimate_quality, sample_pairs, verdicts_from_judgements
from metrics_core.io import read_items
from raterapp.models import (
    Experiment,
    ExperimentBudget,
    ExperimentProgress,
    Judgement,
    OutboxMessage,
    PairTask,
    ReusedVerdict,
    SampledPair,
)
from raterapp.reuse_keys import pair_key
from raterapp.selectors.explorer import explorer_pairs_list
from raterapp.selectors.explorer_pair import explorer_pair_get
from raterapp.selectors.reuse import experiment_reuse_get
from raterapp.selectors.samples import judged_sample_get, judgements_rows
from raterapp.selectors.staleness import estimates_staleness_get
from raterapp.services import outbox
from raterapp.services.refresh.estimates import estimates_refresh
from raterapp.services.refresh.rater_aware import rater_aware_refresh
from raterapp.services.sampling.batches import sample_batch_draw, sample_batch_request
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.preparation import prepared
from tests.raterapp.helpers.reuse import judge_all, keys_of, verdict_of
from tests.raterapp.services.files import random_files

pytestmark = pytest.mark.rating_loop


def in_workspace(engineer, tmp_path, **params):
    files, items_path = random_files(tmp_path)
    return prepared(engineer, files=files, **{"workspace": "w", "n_draws": 400, **params}), items_path


def test_a_second_experiment_takes_the_verdicts_of_pairs_judged_in_its_workspace(engineer, media, tmp_path, truth):
    # Another scheme: the second's sample is not coupled to the first's (test_coupled_sampling), so
    # only some of its pairs are the first's.
    first, _ = in_workspace(engineer, tmp_path, seed=1, scheme="stratified")
    rater = UserFactory(roles=["rater"])
    judge_all(first, rater, truth)
    second, items_path = in_workspace(engineer, tmp_path, seed=2)

    shared = keys_of(first) & keys_of(second)
    assert 0 < len(shared) < len(keys_of(second))
    tasks = PairTask.objects.filter(experiment=second)
    assert sorted(tasks.filter(wanted=0).values_list("pair_key", flat=True)) == sorted(shared)
    assert tasks.filter(wanted=1).count() == len(keys_of(second) - shared)
    assert ExperimentProgress.objects.get(experiment=second).verdicts_left == len(keys_of(second) - shared)
    reused = ReusedVerdict.objects.filter(experiment=second).select_related("task", "source__task")
    assert sorted(r.task.pair_key for r in reused) == sorted(shared)
    assert all(r.source.task.experiment_id == first.pk and r.source.task.pair_key == r.task.pair_key for r in reused)
    assert OutboxMessage.objects.filter(kind="estimates_refresh", target_id=second.pk).exists()
    assert experiment_reuse_get(experiment=second) == {
        "enabled": True,
        "workspace": "w",
        "pairs": len(shared),
        "verdicts": len(shared),
        "saved_verdicts": len(shared),
        "saved": "0.00",
        "coupled_to": None,
    }

    # The estimates are metrics_core on the second's own sample with the verdicts of both.
    judge_all(second, rater, truth, start=10_000)
    second = Experiment.objects.get(pk=second.pk)
    judged = judged_sample_get(experiment=second)
    assert len(judged.verdict) == len(keys_of(second))
    population = read_items(items_path).to_population()
    sample = concatenate_samples(
        [sample_pairs(population, n_draws=400, scheme="jaccard", rng=batch_rng(seed=2, batch=0))]
    )
    pairs = list(PairTask.objects.filter(experiment=second).values_list("item_a__position", "item_b__position"))
    a, b = (np.array(c) for c in zip(*pairs))
    verdicts = verdicts_from_judgements(a, b, np.array([verdict_of(truth, x, y) for x, y in pairs], dtype=object))
    ours = estimate_quality(judged.source, judged.sample, judged.verdicts, horizon=400).as_dict()["estimates"]
    theirs = estimate_quality(population, sample, verdicts, horizon=400).as_dict()["estimates"]
    for name, estimate in theirs.items():
        assert ours[name] == pytest.approx(estimate, rel=1e-12, abs=1e-15, nan_ok=True), name
    snapshot = estimates_refresh(experiment_id=second.pk)
    assert snapshot.judgements == len(keys_of(second))
    assert estimates_staleness_get(experiment=second, snapshot=snapshot) is None


def test_exports_mark_reused_verdicts_with_their_source(engineer, media, tmp_path, truth):
    first, _ = in_workspace(engineer, tmp_path, seed=1, scheme="stratified")  # not coupled: some pairs new
    rater = UserFactory(roles=["rater"])
    judge_all(first, rater, truth)
    second, _ = in_workspace(engineer, tmp_path, seed=2)
    judge_all(second, rater, truth, start=10_000)
    rows = judgements_rows(experiment=second)
    reused = [row for row in rows if row["reused"]]
    own = [row for row in rows if not row["reused"]]
    assert len(reused) == ReusedVerdict.objects.filter(experiment=second).count() > 0
    assert {row["source_experiment"] for row in reused} == {first.pk}
    assert {row["source_experiment"] for row in own} == {None}
    assert len(own) == Judgement.objects.filter(task__experiment=second).count()
    assert {pair_key(row["i"], row["j"]) for row in rows} == keys_of(second)


@pytest.mark.parametrize(
    "change",
    [
        {"question": "Are these the same product?"},
        {"guidelines": "Count variants as the same."},
        {"workspace": "elsewhere"},
        {"reuse_verdicts": False},
    ],
)
def test_another_question_workspace_or_an_opt_out_reuses_nothing(engineer, media, tmp_path, truth, change):
    first, _ = in_workspace(engineer, tmp_path, seed=1)
    judge_all(first, UserFactory(roles=["rater"]), truth)
    second, _ = in_workspace(engineer, tmp_path, **{"seed": 2, **change})
    assert not ReusedVerdict.objects.filter(experiment=second).exists()
    assert set(PairTask.objects.filter(experiment=second).values_list("wanted", flat=True)) == {1}
    assert experiment_reuse_get(experiment=second)["pairs"] == 0


def test_an_experiment_that_opted_out_offers_no_verdicts(engineer, media, tmp_path, truth):
    first, _ = in_workspace(engineer, tmp_path, seed=1, reuse_verdicts=False)
    judge_all(first, UserFactory(roles=["rater"]), truth)
    second, _ = in_workspace(engineer, tmp_path, seed=2)
    assert not ReusedVerdict.objects.filter(experiment=second).exists()


def test_a_changed_question_is_a_new_version(engineer, media, tmp_path):
    first, _ = in_workspace(engineer, tmp_path, seed=1)
    version = first.question_version
    first.guidelines = "New guidelines."
    first.save()
    assert first.question_version != version
    assert first.question_version.guidelines == "New guidelines."
    assert set(PairTask.objects.filter(experiment=first).values_list("question_version", flat=True)) == {version.pk}


def test_replication_asks_only_for_the_verdicts_beyond_those_reused(engineer, media, tmp_path, truth):
    first, _ = in_workspace(engineer, tmp_path, seed=1)
    judge_all(first, UserFactory(roles=["rater"]), truth)
    second, _ = in_workspace(engineer, tmp_path, seed=2, replication=3)
    ExperimentBudget.objects.update_or_create(experiment=second, defaults={"cost_per_verdict": Decimal("0.25")})
    shared = keys_of(first) & keys_of(second)
    tasks = PairTask.objects.filter(experiment=second)
    assert sorted(tasks.filter(wanted=2).values_list("pair_key", flat=True)) == sorted(shared)
    assert tasks.filter(wanted=3).count() == len(keys_of(second) - shared)
    reuse = experiment_reuse_get(experiment=second)
    assert (reuse["pairs"], reuse["verdicts"], reuse["saved"]) == (
        len(shared),
        len(shared),
        f"{0.25 * len(shared):.2f}",
    )


def test_a_batch_drawn_later_reuses_verdicts_too(
    engineer, media, tmp_path, truth, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setitem(outbox.EFFECTS, OutboxMessage.Kind.SAMPLE_BATCH_DRAW, lambda batch_id: None)
    second, _ = in_workspace(engineer, tmp_path, seed=2)
    first, _ = in_workspace(engineer, tmp_path, seed=1, scheme="stratified")  # not coupled to the second's
    judge_all(first, UserFactory(roles=["rater"]), truth)
    assert not ReusedVerdict.objects.filter(experiment=second).exists()  # sampled before the verdicts existed
    before = keys_of(second)
    with django_capture_on_commit_callbacks(execute=True):
        batch = sample_batch_request(experiment=second, actor=engineer, draws=400)
    sample_batch_draw(batch_id=batch.pk)
    added = keys_of(second) - before
    shared = added & keys_of(first)
    assert shared
    assert sorted(ReusedVerdict.objects.filter(experiment=second).values_list("task__pair_key", flat=True)) == sorted(
        shared
    )
    assert PairTask.objects.filter(experiment=second, pair_key__in=shared).exclude(wanted=0).count() == 0


def test_undoing_a_reused_verdict_asks_the_reusing_experiment_for_one_again(engineer, media, tmp_path):
    from raterapp.services.judging import assignment_next, judgement_submit, judgement_undo

    first, _ = in_workspace(engineer, tmp_path, seed=1)
    rater = UserFactory(roles=["rater"])
    task = assignment_next(experiment=first, rater=rater)
    judgement, _ = judgement_submit(
        task=task, rater=rater, verdict="equivalent", client_id="00000000-0000-0000-0000-000000000001"
    )
    second, _ = in_workspace(engineer, tmp_path, seed=1)  # the same sample: it reuses that verdict
    reused = PairTask.objects.get(experiment=second, pair_key=task.pair_key)
    assert reused.wanted == 0 and reused.reused_verdicts.count() == 1
    left = ExperimentProgress.objects.get(experiment=second).verdicts_left

    judgement_undo(judgement_id=judgement.pk, rater=rater)
    reused.refresh_from_db()
    assert reused.wanted == 1 and reused.reused_verdicts.count() == 0
    assert ExperimentProgress.objects.get(experiment=second).verdicts_left == left + 1
    assert OutboxMessage.objects.filter(kind="estimates_refresh", target_id=second.pk).exists()


def test_rater_aware_estimates_count_reused_verdicts_with_their_raters(engineer, media, tmp_path, truth, settings):
    settings.RATER_AWARE_BOOTSTRAP_REPLICATES = 20
    first, _ = in_workspace(engineer, tmp_path, seed=1)
    raters = [UserFactory(roles=["rater"]) for _ in range(2)]
    judged = judge_all(first, raters[0], truth)
    judge_all(first, raters[1], truth, start=judged)
    # Replication 2: both raters' verdicts answer each pair (reuse takes as many as it asks for).
    second, _ = in_workspace(engineer, tmp_path, seed=2, replication=2)
    reused = ReusedVerdict.objects.filter(experiment=second)
    assert reused.count() > 0 and not Judgement.objects.filter(task__experiment=second).exists()

    stored = rater_aware_refresh(experiment_id=second.pk)

    # Without the reused verdicts the second experiment has none, and nothing would be fitted.
    assert stored.error == ""
    assert stored.judgements == reused.count()
    assert sorted(r["rater"] for r in stored.payload["raters"]) == sorted(r.pk for r in raters)


def test_the_pair_explorer_shows_reused_verdicts_with_their_experiment(engineer, media, tmp_path, truth):
    first, _ = in_workspace(engineer, tmp_path, seed=1)
    rater = UserFactory(roles=["rater"])
    judge_all(first, rater, truth)
    second, _ = in_workspace(engineer, tmp_path, seed=2)
    reused = ReusedVerdict.objects.filter(experiment=second).select_related("source", "task")

    rows = {row["task"]: row for row in explorer_pairs_list(experiment=second)}
    for reuse in reused:
        row = rows[reuse.task_id]
        assert row[reuse.source.verdict] == 1 and row["verdict"] == reuse.source.verdict
    reuse = reused.first()
    pair = SampledPair.objects.filter(experiment=second, task=reuse.task).first()
    shown = explorer_pair_get(experiment=second, pair=pair)["verdicts"]
    assert [(v["verdict"], v["rater"], v["source_experiment"]) for v in shown] == [
        (reuse.source.verdict, rater.username, first.pk)
    ]
