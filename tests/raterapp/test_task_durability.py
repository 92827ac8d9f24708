"""Celery's settings for tasks that survive a killed worker, and the beat entry of the stalled-
preparation reconciler."""

from __future__ import annotations

from unittest import mock

from django.conf import settings

from raterapp.celery import app
from raterapp.tasks import experiment_prepare_task, preparations_stalled_requeue_task
from tests.raterapp.helpers.settings import settings_loaded


def test_tasks_are_acknowledged_late_and_given_back_when_their_worker_dies():
    app.loader.import_default_modules()
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1
    assert experiment_prepare_task.acks_late is True


def test_redis_redelivers_only_after_the_longest_preparation_could_have_ended(tmp_path):
    loaded = settings_loaded(
        {"SECRET_KEY": "k", "REDIS_URL": "redis://redis:6379/0"}, "CELERY_BROKER_TRANSPORT_OPTIONS", tmp_path=tmp_path
    )
    assert loaded["CELERY_BROKER_TRANSPORT_OPTIONS"] == {"visibility_timeout": 7200}
    assert loaded["CELERY_BROKER_TRANSPORT_OPTIONS"]["visibility_timeout"] > experiment_prepare_task.time_limit
    loaded = settings_loaded(
        {"SECRET_KEY": "k", "REDIS_URL": "redis://redis:6379/0", "CELERY_VISIBILITY_TIMEOUT": "10800"},
        "CELERY_BROKER_TRANSPORT_OPTIONS",
        tmp_path=tmp_path,
    )
    assert loaded["CELERY_BROKER_TRANSPORT_OPTIONS"] == {"visibility_timeout": 10800}


def test_beat_runs_the_stalled_preparation_reconciler_on_the_live_queue():
    entry = settings.CELERY_BEAT_SCHEDULE["preparations-stalled-requeue"]
    assert entry == {"task": "raterapp.preparations_stalled_requeue", "schedule": settings.PREPARATION_RECONCILE_SECONDS}
    assert entry["task"] in app.tasks  # registered: beat sends it by name
    assert settings.CELERY_TASK_ROUTES[entry["task"]]["queue"].startswith("live")
    with mock.patch("raterapp.services.preparation.control.preparations_stalled_requeue") as reconcile:
        preparations_stalled_requeue_task()
    reconcile.assert_called_once_with()
