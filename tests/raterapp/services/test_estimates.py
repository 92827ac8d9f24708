import json
import uuid
from unittest import mock

import pytest
from django.conf import settings
from django.core.cache import cache

from metrics_core import estimate_quality, impact_metrics, verdicts_from_judgements
from metrics_core.agreement import agreement_summary
from metrics_core.growth import new_pair_share
from raterapp.models import Experiment
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.refresh.estimates import estimate_snapshot_as_dict, estimates_refresh
from raterapp.services.refresh.live import experiment_channel
from raterapp.services.scheduling import ESTIMATES_REFRESH
from raterapp.tasks import estimates_refresh_task
from tests.raterapp.factories import make_raters
from tests.raterapp.helpers.judging import judge_everything
from tests.raterapp.prepared import experiment_prepared, sample_of

pytestmark = pytest.mark.usefixtures("media")


@pytest.fixture(autouse=True)
def no_pending_keys(db):
    """The Redis cache outlives test transactions: forget this test's keys (not the whole cache,
    which may share its Redis database with the Celery broker)."""
    yield
    for experiment_id in Experiment.objects.values_list("pk", flat=True):
        cache.delete(f"estimates-pending:{experiment_id}")


@pytest.fixture
def apply_async():
    with mock.patch.object(estimates_refresh_task, "apply_async") as patched:
        yield patched


@pytest.mark.parametrize("scheme", ["jaccard", "stratified", "precision"])
def test_refresh_gives_what_metrics_core_gives_on_the_same_data(users, apply_async, scheme):
    experiment = experiment_prepared(owner=users["engineer"], scheme=scheme, replication=2, confidence=0.9)
    submitted = judge_everything(experiment, make_raters(3))
    snapshot = estimates_refresh(experiment_id=experiment.pk)

    population, sample = sample_of(experiment)
    a, b, verdict = zip(*submitted)
    verdicts = verdicts_from_judgements(list(a), list(b), list(verdict))
    expected = estimate_quality(population, sample, verdicts, confidence=0.9).as_dict()
    assert snapshot.estimates == {
        **expected,
        "exact": impact_metrics(population).as_dict()["metrics"],
        "judgements": len(submitted),
        "judged_pairs": len(verdicts),
        "agreement": agreement_summary(
            unit=[f"{min(x, y)}-{max(x, y)}" for x, y in zip(a, b)], verdict=list(verdict)
        ).as_dict(),
        "new_pair_share": new_pair_share(sample),
        "sample_draws": sample.n_draws,
    }
    assert snapshot.estimates["agreement"]["replicated_pairs"] == experiment.tasks.count()  # replication 2
    assert (snapshot.judgements, snapshot.judged_pairs) == (len(submitted), len(verdicts))
    assert snapshot.judged_pairs == experiment.tasks.count()
    assert snapshot.estimates["estimates"]["DeltaPrecision"]["value"] is not None


def test_refresh_without_verdicts_stores_undefined_estimates(users):
    experiment = experiment_prepared(owner=users["engineer"])
    snapshot = estimates_refresh(experiment_id=experiment.pk)
    assert (snapshot.judgements, snapshot.judged_pairs) == (0, 0)
    assert snapshot.estimates["estimates"]["BadMergeDistance"]["value"] is None
    assert snapshot.estimates["exact"] == experiment.impact["metrics"]


def test_ten_submits_schedule_one_refresh(users, apply_async, django_capture_on_commit_callbacks):
    experiment = experiment_prepared(owner=users["engineer"])
    for rater in make_raters(10):
        with django_capture_on_commit_callbacks(execute=True):
            task = assignment_next(experiment=experiment, rater=rater)
            judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
    apply_async.assert_called_once_with(args=[experiment.pk], countdown=settings.ESTIMATES_DEBOUNCE_SECONDS)


def test_a_submit_schedules_nothing_before_it_commits(users, apply_async, django_capture_on_commit_callbacks):
    experiment = experiment_prepared(owner=users["engineer"])
    rater = users["rater"]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        task = assignment_next(experiment=experiment, rater=rater)
        judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
    assert len(callbacks) == 1
    apply_async.assert_not_called()


def test_a_verdict_during_a_recompute_schedules_another(users, apply_async):
    experiment = experiment_prepared(owner=users["engineer"])
    assert ESTIMATES_REFRESH.schedule(experiment.pk) is True
    assert ESTIMATES_REFRESH.schedule(experiment.pk) is False
    estimates_refresh(experiment_id=experiment.pk)  # starts by clearing the pending key
    assert ESTIMATES_REFRESH.schedule(experiment.pk) is True
    assert apply_async.call_count == 2


def test_debounce_is_per_experiment(users, apply_async):
    first = experiment_prepared(owner=users["engineer"])
    second = experiment_prepared(owner=users["engineer"], name="second")
    assert ESTIMATES_REFRESH.schedule(first.pk)
    assert ESTIMATES_REFRESH.schedule(second.pk)
    assert [c.kwargs["args"] for c in apply_async.call_args_list] == [[first.pk], [second.pk]]


def test_a_failed_enqueue_leaves_no_pending_key(users, apply_async):
    experiment = experiment_prepared(owner=users["engineer"])
    apply_async.side_effect = ConnectionError("broker down")
    with pytest.raises(ConnectionError):
        ESTIMATES_REFRESH.schedule(experiment.pk)
    apply_async.side_effect = None
    assert ESTIMATES_REFRESH.schedule(experiment.pk) is True


def test_nothing_is_published_without_redis(users, settings, django_capture_on_commit_callbacks):
    settings.REDIS_URL = ""
    experiment = experiment_prepared(owner=users["engineer"])
    with mock.patch("redis.Redis.from_url") as from_url, django_capture_on_commit_callbacks(execute=True):
        estimates_refresh(experiment_id=experiment.pk)
    from_url.assert_not_called()


@pytest.mark.skipif(not settings.REDIS_URL, reason="needs Redis (REDIS_URL)")
def test_the_snapshot_is_published_on_the_experiments_channel(users, django_capture_on_commit_callbacks):
    import redis

    experiment = experiment_prepared(owner=users["engineer"])
    pubsub = redis.Redis.from_url(settings.REDIS_URL).pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(experiment_channel(experiment.pk))
    pubsub.get_message(timeout=1)
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = estimates_refresh(experiment_id=experiment.pk)
    message = pubsub.get_message(timeout=5)
    pubsub.close()
    assert message["channel"].decode() == f"{settings.REDIS_CHANNEL_PREFIX}experiment:{experiment.pk}:estimates"
    assert json.loads(message["data"]) == estimate_snapshot_as_dict(snapshot)
