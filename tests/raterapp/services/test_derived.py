"""ΔRecall and IQ in the app: the derived task stores what metrics_core gives on the same verdicts,
is scheduled after each snapshot (debounced), and carries the calibration when the ground truth is known."""

from unittest import mock

import numpy as np
import pytest
from django.conf import settings
from django.core.cache import cache

from metrics_core import calibration_against_gold, derived_metrics, truth_from_gold, verdicts_from_judgements
from raterapp.models import DerivedEstimate, Experiment
from raterapp.services.refresh.derived import derived_refresh
from raterapp.services.refresh.estimates import estimates_refresh
from raterapp.services.scheduling import DERIVED_REFRESH
from raterapp.tasks import derived_refresh_task
from tests.raterapp.factories import make_raters
from tests.raterapp.helpers.judging import GOLD, judge_everything
from tests.raterapp.prepared import experiment_prepared, sample_of

pytestmark = pytest.mark.usefixtures("media")


@pytest.fixture(autouse=True)
def no_pending_keys(db):
    yield
    for experiment_id in Experiment.objects.values_list("pk", flat=True):
        cache.delete(f"derived-pending:{experiment_id}")
        cache.delete(f"estimates-pending:{experiment_id}")


@pytest.fixture
def apply_async():
    with mock.patch.object(derived_refresh_task, "apply_async") as patched:
        yield patched


@pytest.mark.parametrize("scheme", ["jaccard", "stratified"])
def test_derived_refresh_stores_what_metrics_core_gives_on_the_same_verdicts(users, settings, scheme):
    settings.DERIVED_BOOTSTRAP_REPLICATES = 200
    experiment = experiment_prepared(owner=users["engineer"], scheme=scheme, replication=2, confidence=0.9)
    submitted = judge_everything(experiment, make_raters(2))
    stored = derived_refresh(experiment_id=experiment.pk)

    population, sample = sample_of(experiment)
    a, b, verdict = zip(*submitted)
    verdicts = verdicts_from_judgements(list(a), list(b), list(verdict))
    expected = derived_metrics(
        population, sample, verdicts, rng=np.random.default_rng(experiment.seed), confidence=0.9, n_boot=200
    )
    assert stored.payload == {**expected.as_dict(), "recall_base_source": "owner"}
    assert stored.judgements == len(submitted) and stored.seconds > 0
    assert stored.payload["estimates"]["DeltaRecall"]["value"] is not None
    assert "calibration" not in stored.payload
    # Seeded: the same verdicts give the same intervals.
    assert derived_refresh(experiment_id=experiment.pk).payload == stored.payload


def test_with_a_ground_truth_clustering_the_calibration_is_stored(users, settings):
    settings.DERIVED_BOOTSTRAP_REPLICATES = 100
    experiment = experiment_prepared(owner=users["engineer"])
    population, _ = sample_of(experiment)
    truth = truth_from_gold(population, GOLD)
    experiment.ground_truth_metrics = {"quality": {}, "truth": truth}
    experiment.save()
    judge_everything(experiment, make_raters(1))
    stored = derived_refresh(experiment_id=experiment.pk)
    calibration = stored.payload["calibration"]
    assert calibration["truth"]["DeltaRecall"] == pytest.approx(truth["DeltaRecall"])
    diagram_value = stored.payload["estimates"]["DeltaRecall"]["value"]
    assert calibration["diagram"]["DeltaRecall"] == pytest.approx(diagram_value)
    assert calibration["matching_recall_base"] == calibration_against_gold(
        _diagram_of(experiment), truth
    )["matching_recall_base"]


def _diagram_of(experiment):
    from raterapp.selectors.samples import judged_sample_get

    judged = judged_sample_get(experiment=experiment)
    return derived_metrics(
        judged.population, judged.sample, judged.verdicts, rng=np.random.default_rng(0), n_boot=2
    ).diagram


def test_each_snapshot_asks_for_derived_metrics_once_per_burst(users, apply_async, django_capture_on_commit_callbacks):
    experiment = experiment_prepared(owner=users["engineer"])
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            estimates_refresh(experiment_id=experiment.pk)
    apply_async.assert_called_once_with(args=[experiment.pk], countdown=settings.DERIVED_DEBOUNCE_SECONDS)


def test_a_snapshot_during_a_derived_run_schedules_another(users, apply_async, settings):
    settings.DERIVED_BOOTSTRAP_REPLICATES = 20
    experiment = experiment_prepared(owner=users["engineer"])
    assert DERIVED_REFRESH.schedule(experiment.pk) is True
    assert DERIVED_REFRESH.schedule(experiment.pk) is False
    derived_refresh(experiment_id=experiment.pk)
    assert DERIVED_REFRESH.schedule(experiment.pk) is True
    assert apply_async.call_count == 2
    assert DerivedEstimate.objects.filter(experiment=experiment).count() == 1


def test_without_verdicts_the_derived_metrics_are_undefined(users, settings):
    settings.DERIVED_BOOTSTRAP_REPLICATES = 20
    experiment = experiment_prepared(owner=users["engineer"])
    stored = derived_refresh(experiment_id=experiment.pk)
    assert stored.judgements == 0
    assert stored.payload["estimates"]["DeltaRecall"]["value"] is None
    assert stored.payload["estimates"]["IQ"]["ci_low"] is None
