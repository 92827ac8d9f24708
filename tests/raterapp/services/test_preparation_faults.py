"""Preparations that end: any error fails the experiment with its step, a message and an error id;
a killed run is resumed or, after too many, failed; the memory cap; stalled runs re-queued; re-runs."""

import logging
import re
import resource
import time
from datetime import timedelta
from unittest import mock

import numpy as np
import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError
from django.utils import timezone

from raterapp import tasks
from raterapp.exceptions import StateConflict
from raterapp.models import Experiment, ImpactGroup, Item, PairTask, SampledPair
from raterapp.services.preparation import pipeline as preparation
from raterapp.services.preparation.control import (
    experiment_preparation_rerun,
    preparation_stalled,
    preparations_stalled_requeue,
)
from raterapp.services.preparation.pipeline import experiment_prepare
from raterapp.tasks import experiment_prepare_task
from tests.raterapp.helpers.preparation import assert_nothing_left, created, prepared, rows_of

Status = Experiment.Status
# Where each step can break: a function the step calls, patched in raterapp.services.preparation.pipeline.
STEP_CALLS = {
    Status.VALIDATING: "catalogue_rows_for",
    Status.COMPUTING_IMPACT: "impact_groups_build",
    Status.SAMPLING: "sampled_rows_build",
}
STEP_WORDS = {
    Status.VALIDATING: "validating the upload",
    Status.COMPUTING_IMPACT: "computing impact metrics",
    Status.SAMPLING: "sampling pairs",
}


def breaking(exc: BaseException):
    def broken(**kwargs):
        raise exc

    return broken


@pytest.fixture
def delay():
    with mock.patch.object(experiment_prepare_task, "delay") as patched:
        yield patched


# ---------------------------------------------------------------------------- any error ends the run


@pytest.mark.parametrize("step", list(STEP_CALLS))
def test_an_unexpected_error_in_any_step_fails_with_the_step_a_message_and_a_logged_error_id(
    engineer, media, monkeypatch, caplog, step
):
    monkeypatch.setattr(preparation, STEP_CALLS[step], breaking(ValueError("Take operation overflowed")))
    with caplog.at_level(logging.ERROR, logger="raterapp.services.preparation.pipeline"):
        experiment = prepared(engineer)
    assert (experiment.status, experiment.error_step) == (Status.FAILED, step)
    assert re.fullmatch(r"[0-9a-f]{12}", experiment.error_id)
    assert experiment.error == (
        f"Unexpected error while {STEP_WORDS[step]}: ValueError: Take operation overflowed. "
        f"Re-run the preparation, or report the error id (error id {experiment.error_id})"
    )
    [record] = [r for r in caplog.records if experiment.error_id in r.getMessage()]
    assert record.exc_info[0] is ValueError  # the traceback is logged under the id
    assert_nothing_left(experiment)


def test_a_nul_in_an_error_text_is_stored_escaped(engineer, media, monkeypatch):
    monkeypatch.setattr(preparation, "sampled_rows_build", breaking(ValueError("title 'Be\x00ta'")))
    experiment = prepared(engineer)
    assert experiment.status == Status.FAILED
    assert "ValueError: title 'Be\\x00ta'." in experiment.error


def test_a_lost_database_connection_is_left_to_the_tasks_retry(engineer, media, monkeypatch):
    monkeypatch.setattr(preparation, "impact_groups_build", breaking(OperationalError("server closed the connection")))
    experiment = created(engineer)
    with pytest.raises(OperationalError):
        experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.error) == (Status.COMPUTING_IMPACT, "")


def test_the_soft_time_limit_fails_with_its_own_message(engineer, media, monkeypatch):
    monkeypatch.setattr(preparation, "sampled_rows_build", breaking(SoftTimeLimitExceeded()))
    experiment = prepared(engineer)
    assert experiment.error.startswith(
        "The preparation took longer than its time limit while sampling pairs (error id "
    )
    assert_nothing_left(experiment)


def test_a_run_after_too_many_interrupted_ones_fails_saying_so(engineer, media, settings):
    settings.PREPARATION_MAX_ATTEMPTS = 2
    experiment = created(engineer)
    Experiment.objects.filter(pk=experiment.pk).update(status=Status.SAMPLING, preparation_attempts=2)
    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.error_step) == (Status.FAILED, Status.SAMPLING)
    assert experiment.error.startswith(
        "The preparation was interrupted 2 times while sampling pairs (PREPARATION_MAX_ATTEMPTS): the worker process "
        "was killed (often for lack of memory: see PREPARATION_MEMORY_LIMIT_MB) or lost."
    )
    assert_nothing_left(experiment)


# ---------------------------------------------------------------------------- the memory cap


def allocating(gib: float):
    def build(**kwargs):
        block = np.empty(int(gib * 1024**3), dtype=np.uint8)
        raise AssertionError(f"allocated {block.nbytes} bytes under the cap")

    return build


def test_a_preparation_needing_more_memory_than_the_cap_fails_with_the_setting_to_raise(
    engineer, media, monkeypatch, settings
):
    settings.PREPARATION_MEMORY_LIMIT_MB = 256
    limits_before = resource.getrlimit(resource.RLIMIT_AS)
    monkeypatch.setattr(preparation, "impact_groups_build", allocating(2))
    experiment = prepared(engineer)
    assert (experiment.status, experiment.error_step) == (Status.FAILED, Status.COMPUTING_IMPACT)
    assert experiment.error == (
        "The preparation needed more than 256 MB of memory while computing impact metrics; raise "
        f"PREPARATION_MEMORY_LIMIT_MB or use the Dask engine (error id {experiment.error_id})"
    )
    assert_nothing_left(experiment)
    assert resource.getrlimit(resource.RLIMIT_AS) == limits_before
    np.empty(2 * 1024**3, dtype=np.uint8)  # the cap is lifted after the run


def test_without_the_cap_the_same_allocation_goes_through(engineer, media, monkeypatch, settings):
    """The failure above is the cap's: with PREPARATION_MEMORY_LIMIT_MB=0 the 2 GiB block is allocated."""
    settings.PREPARATION_MEMORY_LIMIT_MB = 0
    monkeypatch.setattr(preparation, "impact_groups_build", allocating(2))
    experiment = prepared(engineer)
    assert experiment.error.startswith(
        "Unexpected error while computing impact metrics: AssertionError: allocated 2147483648 bytes"
    )


# ---------------------------------------------------------------------------- the heartbeat


def test_a_running_preparation_stamps_its_heartbeat(engineer, media, monkeypatch, settings, transactional_db):
    settings.PREPARATION_HEARTBEAT_SECONDS = 0.05
    seen = []
    build = preparation.impact_groups_build

    def slow_build(**kwargs):
        for _ in range(3):
            time.sleep(0.3)
            seen.append(Experiment.objects.values_list("heartbeat_at", flat=True).get(pk=kwargs["experiment"].pk))
        return build(**kwargs)

    monkeypatch.setattr(preparation, "impact_groups_build", slow_build)
    started = timezone.now()
    experiment = prepared(engineer)
    assert experiment.status == Status.RATING
    assert started < seen[0] < seen[1] < seen[2]


# ---------------------------------------------------------------------------- stalled preparations


def stalled_at(experiment, status, *, seconds_ago, attempts=1):
    Experiment.objects.filter(pk=experiment.pk).update(
        status=status, heartbeat_at=timezone.now() - timedelta(seconds=seconds_ago), preparation_attempts=attempts
    )


def test_a_preparation_without_heartbeat_is_requeued_once_and_then_resumes(
    engineer, media, settings, delay, django_capture_on_commit_callbacks
):
    settings.PREPARATION_STALL_SECONDS = 60
    reference = rows_of(prepared(engineer))
    experiment = created(engineer)
    experiment_prepare(experiment_id=experiment.pk)
    Experiment.objects.filter(pk=experiment.pk).update(status=Status.SAMPLING)
    PairTask.objects.filter(experiment=experiment).delete()  # a sampling step killed before it committed
    SampledPair.objects.filter(experiment=experiment).delete()
    Item.objects.filter(experiment=experiment).delete()
    stalled_at(experiment, Status.SAMPLING, seconds_ago=61)
    assert preparation_stalled(experiment=Experiment.objects.get(pk=experiment.pk))

    with django_capture_on_commit_callbacks(execute=True):
        assert preparations_stalled_requeue() == {"requeued": [experiment.pk], "failed": []}
        assert preparations_stalled_requeue() == {"requeued": [], "failed": []}  # its heartbeat is fresh again
    delay.assert_called_once_with(experiment.pk)

    experiment_prepare(experiment_id=experiment.pk)  # what the re-queued task does
    experiment.refresh_from_db()
    assert experiment.status == Status.RATING
    assert rows_of(experiment) == reference


def test_healthy_prepared_and_failed_experiments_are_not_requeued(engineer, media, settings, delay):
    settings.PREPARATION_STALL_SECONDS = 60
    healthy, ready, failed = created(engineer), prepared(engineer), created(engineer)
    stalled_at(healthy, Status.COMPUTING_IMPACT, seconds_ago=59)
    Experiment.objects.filter(pk=ready.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    stalled_at(failed, Status.FAILED, seconds_ago=3600)
    assert preparations_stalled_requeue() == {"requeued": [], "failed": []}
    delay.assert_not_called()


def test_a_preparation_stalled_too_often_fails_with_a_message(engineer, media, settings, delay):
    settings.PREPARATION_STALL_SECONDS = 60
    settings.PREPARATION_MAX_ATTEMPTS = 3
    experiment = created(engineer)
    stalled_at(experiment, Status.VALIDATING, seconds_ago=120, attempts=3)
    assert preparations_stalled_requeue() == {"requeued": [], "failed": [experiment.pk]}
    experiment.refresh_from_db()
    assert (experiment.status, experiment.error_step) == (Status.FAILED, Status.VALIDATING)
    assert experiment.error == (
        "The preparation was interrupted 3 times while validating the upload (PREPARATION_MAX_ATTEMPTS): the worker "
        "process was killed (often for lack of memory: see PREPARATION_MEMORY_LIMIT_MB) or lost. Re-run it once the "
        f"cause is fixed (error id {experiment.error_id})"
    )
    delay.assert_not_called()
    assert_nothing_left(experiment)


# ---------------------------------------------------------------------------- re-runs


def test_a_failed_preparation_reruns_from_the_upload_to_the_same_sample(
    engineer, media, monkeypatch, delay, django_capture_on_commit_callbacks
):
    reference = rows_of(prepared(engineer))
    build = preparation.sampled_rows_build
    monkeypatch.setattr(preparation, "sampled_rows_build", breaking(MemoryError()))
    experiment = prepared(engineer)
    assert experiment.status == Status.FAILED

    monkeypatch.setattr(preparation, "sampled_rows_build", build)
    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_preparation_rerun(experiment=experiment)
    assert (experiment.status, experiment.error, experiment.error_id, experiment.error_step) == (
        Status.QUEUED,
        "",
        "",
        "",
    )
    assert experiment.preparation_attempts == 0
    delay.assert_called_once_with(experiment.pk)

    experiment_prepare(experiment_id=experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.preparation_attempts) == (Status.RATING, 1)
    assert rows_of(experiment) == reference


def test_a_stalled_preparation_reruns_from_a_clean_slate(
    engineer, media, settings, delay, django_capture_on_commit_callbacks
):
    settings.PREPARATION_STALL_SECONDS = 60
    experiment = prepared(engineer)
    stalled_at(experiment, Status.SAMPLING, seconds_ago=300, attempts=2)  # its impact rows and sample are there
    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_preparation_rerun(experiment=experiment)
    assert (experiment.status, experiment.heartbeat_at, experiment.preparation_attempts) == (Status.QUEUED, None, 0)
    assert ImpactGroup.objects.filter(experiment=experiment).count() == 0
    assert_nothing_left(experiment)
    delay.assert_called_once_with(experiment.pk)


@pytest.mark.parametrize(
    "status, seconds_ago, message",
    [
        (Status.SAMPLING, 5, "The preparation is running (sampling pairs, last sign of life 5 s ago); "
                             "it can be re-run once it fails or stalls."),
        (Status.RATING, 3600, "The experiment is prepared already: there is nothing to re-run."),
        (Status.DONE, 3600, "The experiment is prepared already: there is nothing to re-run."),
    ],
)  # fmt: skip
def test_a_healthy_or_finished_preparation_is_not_rerun(engineer, media, settings, delay, status, seconds_ago, message):
    settings.PREPARATION_STALL_SECONDS = 60
    experiment = prepared(engineer)
    stalled_at(experiment, status, seconds_ago=seconds_ago)
    before = rows_of(experiment)
    with pytest.raises(StateConflict) as refused:
        experiment_preparation_rerun(experiment=experiment)
    assert str(refused.value) == message
    assert Experiment.objects.get(pk=experiment.pk).status == status
    assert rows_of(experiment) == before
    delay.assert_not_called()


def test_without_proc_there_is_no_cap_and_the_preparation_runs(engineer, media, monkeypatch, settings):
    from raterapp.services.preparation import guard as preparation_guard

    def no_proc(*args, **kwargs):
        raise FileNotFoundError("/proc/self/status")

    settings.PREPARATION_MEMORY_LIMIT_MB = 1
    limits_before = resource.getrlimit(resource.RLIMIT_AS)
    monkeypatch.setattr(preparation_guard, "open", no_proc, raising=False)
    experiment = prepared(engineer)
    assert (experiment.status, experiment.error) == (Status.RATING, "")
    assert resource.getrlimit(resource.RLIMIT_AS) == limits_before


# ---------------------------------------------------------------------------- database blips


def flaky(times: int, exc: BaseException, then):
    """Raises ``exc`` on the first ``times`` calls, then does what ``then`` does."""
    calls = []

    def call(**kwargs):
        calls.append(1)
        if len(calls) <= times:
            raise exc
        return then(**kwargs)

    return call


def test_a_database_blip_is_retried_and_counts_as_no_interrupted_run(engineer, media, monkeypatch, settings):
    """Three runs ended by the database (a restart: "server closed the connection") with 2 runs
    allowed: it ends rating as one run (it once failed "interrupted 3 times ... lack of memory").
    The waits are spent in the task: a retry through the broker is lost when Redis is down too."""
    settings.PREPARATION_MAX_ATTEMPTS = 2
    blip = OperationalError("server closed the connection unexpectedly")
    monkeypatch.setattr(preparation, "impact_groups_build", flaky(3, blip, preparation.impact_groups_build))
    waits = []
    monkeypatch.setattr(tasks, "_database_wait", lambda experiment_id, seconds: waits.append(seconds))
    monkeypatch.setattr(experiment_prepare_task, "retry", broker_down)
    experiment = created(engineer)
    experiment_prepare_task.run(experiment.pk)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.error, experiment.preparation_attempts) == (Status.RATING, "", 1)
    assert waits == [2, 4, 8]  # a minute in all at most: 2, 4, 8, 16, 30 s


def test_a_database_out_of_reach_through_every_retry_fails_saying_so(engineer, media, monkeypatch):
    monkeypatch.setattr(
        preparation, "impact_groups_build", breaking(OperationalError("the database system is starting up"))
    )
    waits = []
    monkeypatch.setattr(tasks, "_database_wait", lambda experiment_id, seconds: waits.append(seconds))
    monkeypatch.setattr(experiment_prepare_task, "retry", broker_down)
    experiment = created(engineer)
    experiment_prepare_task.run(experiment.pk)
    experiment.refresh_from_db()
    assert waits == [2, 4, 8, 16, 30]
    assert (experiment.status, experiment.error_step) == (Status.FAILED, Status.COMPUTING_IMPACT)
    assert experiment.error.startswith(
        "The database was out of reach while computing impact metrics, and stayed so through retries over 60 s "
        "(OperationalError: the database system is starting up). Re-run the preparation once the database answers"
    )
    assert "memory" not in experiment.error


def broker_down(*args, **kwargs):
    raise OSError("Error 111 connecting to redis:6379. Connection refused.")


def test_a_run_waiting_for_the_database_keeps_its_heartbeat_so_the_reconciler_leaves_it(
    transactional_db, engineer, media, settings
):
    """While the task waits to run again, it stamps the heartbeat each second the database
    answers: a wait once let the heartbeat age past PREPARATION_STALL_SECONDS, and the reconciler
    re-queued the run (a second run beside it, counted as interrupted)."""
    settings.PREPARATION_STALL_SECONDS = 60
    experiment = created(engineer)
    old = timezone.now() - timedelta(seconds=90)
    Experiment.objects.filter(pk=experiment.pk).update(status=Status.COMPUTING_IMPACT, heartbeat_at=old)
    tasks._database_wait(experiment.pk, 1)
    experiment.refresh_from_db()
    assert experiment.heartbeat_at > old + timedelta(seconds=60)
    assert not preparation_stalled(experiment=experiment)
