"""The transactional outbox: side effects written with the data, dispatched once after the commit,
kept when the broker or Redis does not answer, and dispatched later by the reconciler."""

import logging
import uuid
from unittest import mock

import pytest
from django.db import OperationalError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from rest_framework.test import APIClient

from raterapp.models import Judgement, OutboxMessage
from raterapp.services import outbox
from raterapp.services.judging import assignment_next, judgement_submit
from raterapp.services.outbox import CLAIM_SECONDS, outbox_add, outbox_dispatch
from raterapp.services.scheduling import DERIVED_REFRESH, ESTIMATES_REFRESH, RATER_AWARE_REFRESH, debounce_cache
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.usefixtures("media")
Kind = OutboxMessage.Kind
# Nothing listens here (the process-level tests of this branch use 17100-17189).
DEAD_REDIS = "redis://127.0.0.1:17199/0"


@pytest.fixture
def effects(monkeypatch):
    """Every effect the outbox dispatches, as (kind, target) in order; ``effects.failing`` makes them raise."""

    class Recorder(list):
        failing: Exception | None = None

    recorder = Recorder()
    for kind in Kind.values:

        def effect(target_id, kind=kind):
            if recorder.failing is not None:
                raise recorder.failing
            recorder.append((kind, target_id))

        monkeypatch.setitem(outbox.EFFECTS, kind, effect)
    return recorder


@pytest.fixture
def experiment(engineer):
    return experiment_prepared(owner=engineer)


def submit_one(experiment, rater=None):
    rater = rater or UserFactory(roles=["rater"])
    task = assignment_next(experiment=experiment, rater=rater)
    return judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())[0]


def test_a_verdict_writes_its_refresh_in_its_transaction_and_it_is_dispatched_once_after_commit(
    experiment, effects, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submit_one(experiment)
        message = OutboxMessage.objects.get()
        assert (message.kind, message.target_id, message.attempts) == (Kind.ESTIMATES_REFRESH, experiment.pk, 0)
        assert effects == []
    assert [callback.__name__ for callback in callbacks] == ["outbox_dispatch_after_commit"]
    callbacks[0]()
    assert effects == [(Kind.ESTIMATES_REFRESH, experiment.pk)]
    assert OutboxMessage.objects.count() == 0
    callbacks[0]()
    assert outbox_dispatch() == 0
    assert effects == [(Kind.ESTIMATES_REFRESH, experiment.pk)]


def test_a_rolled_back_transaction_takes_its_side_effects_with_it(
    experiment, effects, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            outbox_add(kind=Kind.EXPERIMENT_PREPARE, target_id=experiment.pk)
            outbox_add(kind=Kind.ESTIMATES_REFRESH, target_id=experiment.pk)
            raise RuntimeError("the data is refused")
    assert callbacks == []
    assert OutboxMessage.objects.count() == 0
    assert outbox_dispatch() == 0
    assert effects == []


def test_a_failed_dispatch_leaves_the_row_pending_and_the_verdict_stored(
    experiment, effects, django_capture_on_commit_callbacks
):
    effects.failing = ConnectionError("Error 111 connecting to redis")
    with django_capture_on_commit_callbacks(execute=True):
        judgement = submit_one(experiment)
    assert Judgement.objects.filter(pk=judgement.pk).exists()
    message = OutboxMessage.objects.get()
    assert (message.kind, message.target_id, message.attempts, message.claimed_by) == (
        Kind.ESTIMATES_REFRESH,
        experiment.pk,
        1,
        None,
    )
    assert message.last_error == "ConnectionError: Error 111 connecting to redis"
    assert outbox_dispatch() == 0  # still failing: kept, one more attempt counted
    assert OutboxMessage.objects.get().attempts == 2

    effects.failing = None
    assert outbox_dispatch() == 1
    assert effects == [(Kind.ESTIMATES_REFRESH, experiment.pk)]
    assert OutboxMessage.objects.count() == 0


def test_a_database_lost_after_the_commit_is_a_warning_and_the_row_waits_for_the_reconciler(
    experiment, effects, django_capture_on_commit_callbacks, caplog
):
    """The chaos test's case: PostgreSQL terminates the connection between a verdict's commit and
    its dispatch, so neither the hand-over nor the record of its failure reaches the database. The
    outage is expected and handled: a one-line warning, not an error with a traceback."""
    lost = OperationalError("consuming input failed: server closed the connection unexpectedly")
    effects.failing = lost
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        judgement = submit_one(experiment)
    with mock.patch.object(QuerySet, "update", side_effect=lost), caplog.at_level(logging.WARNING):
        callbacks[-1]()
        assert outbox_dispatch() == 0
    assert Judgement.objects.filter(pk=judgement.pk).exists()
    assert OutboxMessage.objects.get().attempts == 0  # nothing recorded, the row kept
    assert [record.levelname for record in caplog.records if record.name == outbox.__name__] == ["WARNING"] * 3
    assert not [record for record in caplog.records if record.exc_info], caplog.text
    assert "the database is out of reach" in caplog.text

    effects.failing = None
    assert outbox_dispatch() == 1


def test_pending_rows_of_one_effect_are_dispatched_once_for_all_oldest_first(engineer, effects):
    for kind, target in [
        (Kind.ESTIMATES_REFRESH, 7),
        (Kind.EXPERIMENT_PREPARE, 3),
        (Kind.ESTIMATES_REFRESH, 7),
        (Kind.RATER_AUTO_PAUSE, 7),
        (Kind.ESTIMATES_REFRESH, 7),
        (Kind.ESTIMATES_REFRESH, 8),
    ]:
        OutboxMessage.objects.create(kind=kind, target_id=target)
    assert outbox_dispatch() == 4
    assert effects == [
        (Kind.ESTIMATES_REFRESH, 7),
        (Kind.EXPERIMENT_PREPARE, 3),
        (Kind.RATER_AUTO_PAUSE, 7),
        (Kind.ESTIMATES_REFRESH, 8),
    ]
    assert OutboxMessage.objects.count() == 0


def test_only_the_given_rows_are_dispatched_after_a_commit(engineer, effects):
    mine = OutboxMessage.objects.create(kind=Kind.ESTIMATES_REFRESH, target_id=1)
    other = OutboxMessage.objects.create(kind=Kind.ESTIMATES_REFRESH, target_id=1)
    assert outbox_dispatch(ids=[mine.pk]) == 1
    assert list(OutboxMessage.objects.values_list("pk", flat=True)) == [other.pk]


def test_a_claimed_row_is_left_to_its_dispatcher_until_the_claim_is_stale(engineer, effects, clock):
    OutboxMessage.objects.create(
        kind=Kind.SAMPLE_BATCH_DRAW, target_id=5, claimed_by=uuid.uuid4(), claimed_at=timezone.now()
    )
    assert outbox_dispatch() == 0
    clock.advance(CLAIM_SECONDS - 1)
    assert outbox_dispatch() == 0
    clock.advance(2)
    assert outbox_dispatch() == 1
    assert effects == [(Kind.SAMPLE_BATCH_DRAW, 5)]


def test_every_effect_starts_its_task_with_the_target(engineer, monkeypatch, settings):
    """Each kind of row starts its task, through the scheduling module, with the row's target (the
    debounce of each schedule is tested on its own)."""
    from raterapp import tasks

    settings.RATER_AUTO_PAUSE = True
    called = []
    monkeypatch.setattr(tasks.experiment_prepare_task, "delay", lambda pk: called.append(("prepare", pk)))
    monkeypatch.setattr(tasks.sample_batch_draw_task, "delay", lambda pk: called.append(("batch", pk)))
    for name, task in [
        ("estimates", tasks.estimates_refresh_task), ("derived", tasks.derived_refresh_task),
        ("rater_aware", tasks.rater_aware_refresh_task), ("pause", tasks.raters_auto_pause_task),
    ]:  # fmt: skip
        monkeypatch.setattr(task, "apply_async", lambda args, countdown, name=name: called.append((name, args[0])))
    first = 10**9 + uuid.uuid4().int % 10**9  # targets no earlier test's debounce key names
    for target, kind in enumerate(Kind.values, start=first):
        OutboxMessage.objects.create(kind=kind, target_id=target)
    try:
        assert outbox_dispatch() == 5
    finally:  # the debounce cache outlives the test
        for refresh, target in [
            (ESTIMATES_REFRESH, first + 2),
            (DERIVED_REFRESH, first + 3),
            (RATER_AWARE_REFRESH, first + 3),
        ]:
            debounce_cache().delete(refresh.pending_key(target))
        debounce_cache().delete(f"rater-auto-pause-pending:{first + 4}")
    assert called == [
        ("prepare", first), ("batch", first + 1), ("estimates", first + 2), ("derived", first + 3),
        ("rater_aware", first + 3), ("pause", first + 4),
    ]  # fmt: skip


def test_with_redis_down_a_submit_answers_201_and_its_refresh_waits_in_the_outbox(
    experiment, settings, django_capture_on_commit_callbacks
):
    """Throttles (the fail-soft default cache) and the debounce (the strict one) both on a Redis that is gone."""
    settings.CACHES = {
        "default": {"BACKEND": "raterapp.cache.FailSoftRedisCache", "LOCATION": DEAD_REDIS},
        "debounce": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": DEAD_REDIS},
    }
    settings.RATER_AUTO_PAUSE = True
    client = APIClient()
    client.force_authenticate(UserFactory(roles=["rater"]))
    pair = client.post(f"/api/experiments/{experiment.pk}/next-pair/", {"holding": []}, format="json")
    assert pair.status_code == 200
    body = {"task": pair.json()["pair"]["task"], "verdict": "equivalent", "client_id": str(uuid.uuid4())}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/judgements/", body, format="json")
    assert response.status_code == 201, response.content
    assert Judgement.objects.filter(task_id=body["task"]).count() == 1
    pending = sorted(OutboxMessage.objects.values_list("kind", "attempts"))
    assert pending == [(Kind.ESTIMATES_REFRESH, 1), (Kind.RATER_AUTO_PAUSE, 1)]
    assert all("ConnectionError" in error for error in OutboxMessage.objects.values_list("last_error", flat=True))


def test_an_upload_while_the_broker_is_down_answers_201_once_and_is_prepared_when_it_is_back(
    engineer, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    from raterapp.models import Experiment
    from raterapp.services.reconcile import reconcile
    from raterapp.tasks import experiment_prepare_task
    from tests.raterapp.services.files import tiny_files

    client = APIClient()
    client.force_authenticate(engineer)
    down = OperationalError("Error 111 connecting to redis:6379. Connection refused.")
    with mock.patch.object(experiment_prepare_task, "delay", side_effect=down) as delay:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/api/experiments/", {"name": "during the outage", **tiny_files()}, format="multipart"
            )
    assert response.status_code == 201, response.content
    experiment = Experiment.objects.get()
    assert (response.json()["id"], experiment.status) == (experiment.pk, Experiment.Status.QUEUED)
    delay.assert_called_once_with(experiment.pk)
    assert list(OutboxMessage.objects.values_list("kind", "target_id", "attempts")) == [
        (Kind.EXPERIMENT_PREPARE, experiment.pk, 1)
    ]

    with mock.patch.object(experiment_prepare_task, "delay") as delay:
        assert reconcile()["dispatched"] == 1
    delay.assert_called_once_with(experiment.pk)
    assert OutboxMessage.objects.count() == 0
