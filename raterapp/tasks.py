"""Celery tasks: thin wrappers over services, with stable names, ids as arguments and time limits.

``acks_late`` and retries are safe because every service called here is idempotent: a task
that runs twice (worker killed, message redelivered, retried) leaves the same result.
"""

from __future__ import annotations

import logging
import time

from celery import shared_task
from django.db import connection

from raterapp import task_names
from raterapp.exceptions import DATABASE_OUT_OF_REACH

logger = logging.getLogger(__name__)

# A lost database connection or a full disk is worth another try; bad data is not (the
# services store it on the experiment and return). The preparation stores every error but a lost
# database connection as its failure, which its owner may re-run.
TRANSIENT = (*DATABASE_OUT_OF_REACH, OSError)
RETRY = {"autoretry_for": TRANSIENT, "retry_backoff": 2, "retry_backoff_max": 120, "max_retries": 5}


# A preparation the database ended (a restart or a failover takes 10-30 s) is run again after these
# waits, a minute in all, each run resuming at its step; then it fails saying why. The waits are
# spent in the task, not through the broker: a Redis outage at the same time must not lose the run.
DATABASE_RETRY_SECONDS = (2, 4, 8, 16, 30)


@shared_task(
    name=task_names.EXPERIMENT_PREPARE, acks_late=True, time_limit=3600, soft_time_limit=3500,
    autoretry_for=(OSError,), retry_backoff=2, retry_backoff_max=120, max_retries=5,
)  # fmt: skip
def experiment_prepare_task(experiment_id: int, after_database_error: bool = False) -> None:
    """Validate and load the upload, compute impact metrics, draw the sample, open for rating.
    (``after_database_error``: the retries of releases that retried through the broker.)"""
    from raterapp.services.preparation.pipeline import experiment_prepare

    for retry, wait in enumerate((*DATABASE_RETRY_SECONDS, None)):
        try:
            experiment_prepare(experiment_id=experiment_id, after_database_error=after_database_error or retry > 0)
            return
        except DATABASE_OUT_OF_REACH as error:
            if wait is None:
                _database_failure_store(experiment_id, error)
                return
            logger.warning("experiment %s: the database is out of reach (%s); again in %ss", experiment_id, error, wait)
            _database_wait(experiment_id, wait)


def _database_wait(experiment_id: int, seconds: float) -> None:
    """Wait for the database to come back, trying to stamp the run's heartbeat each second: the
    stall reconciler must not take a run that waits for the database for a lost one, once the
    database answers again."""
    from raterapp.services.preparation.guard import heartbeat_stamp

    connection.close_if_unusable_or_obsolete()
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(1.0, left))
        if not heartbeat_stamp(experiment_id=experiment_id):
            connection.close()  # a broken connection: a fresh one for the next try


def _database_failure_store(experiment_id: int, error: BaseException) -> None:
    from raterapp.services.preparation.pipeline import preparation_fail_database

    try:
        preparation_fail_database(experiment_id=experiment_id, error=error, seconds=sum(DATABASE_RETRY_SECONDS))
    except DATABASE_OUT_OF_REACH:
        logger.warning("experiment %s: the database is still out of reach; the reconciler will look", experiment_id)


@shared_task(name=task_names.PREPARATIONS_STALLED_REQUEUE, time_limit=120, soft_time_limit=100)
def preparations_stalled_requeue_task() -> None:
    """Re-queue (or fail, after too many runs) the preparations whose heartbeat stopped; run by celery beat."""
    from raterapp.services.preparation.control import preparations_stalled_requeue

    preparations_stalled_requeue()


@shared_task(name=task_names.SAMPLE_BATCH_DRAW, acks_late=True, time_limit=3600, soft_time_limit=3500, **RETRY)
def sample_batch_draw_task(batch_id: int) -> None:
    """Draw a requested batch of more pairs and append it to its experiment's sample."""
    from raterapp.services.sampling.batches import sample_batch_draw

    sample_batch_draw(batch_id=batch_id)


@shared_task(name=task_names.ESTIMATES_REFRESH, acks_late=True, time_limit=600, soft_time_limit=570, **RETRY)
def estimates_refresh_task(experiment_id: int) -> None:
    """Recompute the estimates from every verdict so far, store a snapshot and publish it."""
    from raterapp.services.refresh.estimates import estimates_refresh

    if _experiment_exists(experiment_id, "estimates_refresh"):
        estimates_refresh(experiment_id=experiment_id)


@shared_task(name=task_names.DERIVED_REFRESH, acks_late=True, time_limit=900, soft_time_limit=870, **RETRY)
def derived_refresh_task(experiment_id: int) -> None:
    """Recompute ΔRecall and IQ with their bootstrap intervals (and their ground-truth
    calibration) from every verdict."""
    from raterapp.services.refresh.derived import derived_refresh

    if _experiment_exists(experiment_id, "derived_refresh"):
        derived_refresh(experiment_id=experiment_id)


@shared_task(name=task_names.RATER_AWARE_REFRESH, acks_late=True, time_limit=900, soft_time_limit=870, **RETRY)
def rater_aware_refresh_task(experiment_id: int) -> None:
    """Refit the raters (Dawid–Skene), recompute the rater-aware estimates and the transitivity counts."""
    from raterapp.services.refresh.rater_aware import rater_aware_refresh

    if _experiment_exists(experiment_id, "rater_aware_refresh"):
        rater_aware_refresh(experiment_id=experiment_id)


@shared_task(name=task_names.RATER_AGREEMENT_REFRESH, acks_late=True, time_limit=300, soft_time_limit=270, **RETRY)
def rater_agreement_refresh_task(experiment_id: int) -> None:
    """Recompute and store each rater's agreement with the others in the experiment."""
    from raterapp.services.refresh.rater_agreement import rater_agreement_refresh

    if _experiment_exists(experiment_id, "rater_agreement_refresh"):
        rater_agreement_refresh(experiment_id=experiment_id)


@shared_task(name=task_names.RATER_AGREEMENT_ALL_REFRESH, acks_late=True, time_limit=600, soft_time_limit=570, **RETRY)
def rater_agreement_all_refresh_task() -> None:
    """Recompute and store each rater's agreement with the others across all experiments."""
    from raterapp.services.refresh.rater_agreement import rater_agreement_refresh

    rater_agreement_refresh(experiment_id=None)


def _experiment_exists(experiment_id: int, what: str) -> bool:
    """Whether the experiment of a refresh is still there: one deleted (by an admin) while its
    refresh waited in the queue leaves nothing to recompute."""
    from raterapp.models import Experiment

    if Experiment.objects.filter(pk=experiment_id).exists():
        return True
    logger.info("%s of experiment %s skipped: it no longer exists", what, experiment_id)
    return False


@shared_task(name=task_names.RATERS_AUTO_PAUSE, acks_late=True, time_limit=300, soft_time_limit=270, **RETRY)
def raters_auto_pause_task(rater_id: int | None = None) -> None:
    """Pause the rater (every rater when ``rater_id`` is None) if a rater-quality flag is raised
    and ``RATER_AUTO_PAUSE`` is on; scheduled after verdicts, at most once a minute per rater."""
    from raterapp.services.accounts.rater_auto_pause import raters_auto_pause

    raters_auto_pause(rater_ids=None if rater_id is None else [rater_id])


@shared_task(name=task_names.RECONCILE, time_limit=600, soft_time_limit=570)
def reconcile_task() -> dict:
    """Celery beat's periodic repair: dispatch the pending outbox, recompute stale estimates."""
    from raterapp.services.reconcile import reconcile

    return reconcile()
