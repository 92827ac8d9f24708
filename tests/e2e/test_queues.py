"""Preparation and live refreshes on queues of their own (settings.CELERY_TASK_ROUTES), each with
its worker as in docker-compose.yml: an hour-long preparation does not hold up the dashboards."""

from __future__ import annotations

import sys

import pytest

from raterapp.models import EstimateSnapshot
from raterapp.tasks import estimates_refresh_task, experiment_prepare_task
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

from .conftest import celery_worker_started, queue_of, wait_for


@pytest.mark.slow
def test_estimates_refresh_while_a_long_preparation_runs(transactional_db, tmp_path):
    assert queue_of("raterapp.experiment_prepare") != queue_of("raterapp.estimates_refresh")
    started, release = tmp_path / "started", tmp_path / "release"
    rating = experiment_prepared(owner=UserFactory(roles=["engineer"]), name="being rated")
    # The held worker blocks on whatever task it takes first: not on one an earlier test left in
    # this queue (a preparation redelivered after a worker was killed, say).
    _queue_purge(queue_of("raterapp.experiment_prepare"))
    held = [sys.executable, "-m", "tests.e2e.slow_preparation", str(started), str(release)]
    with (
        celery_worker_started(tmp_path, queues=queue_of("raterapp.experiment_prepare"), name="preparation", command=held),
        celery_worker_started(tmp_path, queues=queue_of("raterapp.estimates_refresh"), name="live"),
    ):
        experiment_prepare_task.delay(experiment_id=12345)
        wait_for(started.exists, timeout=60, what="the preparation to start")

        estimates_refresh_task.delay(experiment_id=rating.pk)
        wait_for(EstimateSnapshot.objects.filter(experiment=rating).exists, timeout=60, what="a snapshot")
        assert not started.with_suffix(".done").exists()  # the preparation still runs

        release.touch()
        wait_for(started.with_suffix(".done").exists, timeout=30, what="the preparation to end")


def _queue_purge(queue: str) -> None:
    from raterapp.celery import app

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge(queue)
