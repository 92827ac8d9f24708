"""Preparations that stall or fail: the reconciler that re-queues them, and the owner's re-run.

A preparation is *stalled* when it is in a preparing step and its heartbeat
(``Experiment.heartbeat_at``, stamped by the running worker) is older than
``PREPARATION_STALL_SECONDS``: the worker was killed or lost, and the broker will redeliver the
task only after its visibility timeout (hours, as preparations are long). Celery beat runs
:func:`preparations_stalled_requeue` every ``PREPARATION_RECONCILE_SECONDS``.

A re-queued message that waits in a busy queue longer than the stall time is re-queued again;
the extra messages are harmless: a run that finds the experiment prepared does nothing, and
runs are counted only when they start (``preparation_attempts``), so waiting is never failure.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from raterapp.exceptions import StateConflict
from raterapp.models import PREPARATION_STEPS, Experiment, OutboxMessage
from raterapp.population_files import population_delete
from raterapp.services.outbox import outbox_add
from raterapp.services.preparation.pipeline import (
    RESULTS_CLEARED,
    preparation_fail_interrupted,
    preparation_rows_delete,
)

logger = logging.getLogger(__name__)
Status = Experiment.Status
STEPS = PREPARATION_STEPS


def preparations_stalled_requeue(*, now: datetime | None = None) -> dict[str, list[int]]:
    """Re-queue every stalled preparation (it resumes at its step), or fail it with a message once
    it has started ``PREPARATION_MAX_ATTEMPTS`` runs. Returns the ids, by what was done."""
    now = now or timezone.now()
    done: dict[str, list[int]] = {"requeued": [], "failed": []}
    for experiment in Experiment.objects.filter(_stalled(now), status__in=STEPS):
        if experiment.preparation_attempts >= settings.PREPARATION_MAX_ATTEMPTS:
            if preparation_fail_interrupted(experiment=experiment, runs=experiment.preparation_attempts):
                done["failed"].append(experiment.pk)
            continue
        with transaction.atomic():
            # Conditional on the heartbeat read: two reconcilers, or a run that came back to life, win once.
            claimed = Experiment.objects.filter(
                pk=experiment.pk, status=experiment.status, heartbeat_at=experiment.heartbeat_at
            ).update(heartbeat_at=now)
            if claimed:
                outbox_add(kind=OutboxMessage.Kind.EXPERIMENT_PREPARE, target_id=experiment.pk)
                done["requeued"].append(experiment.pk)
    if done["requeued"] or done["failed"]:
        logger.warning("stalled preparations: re-queued %s, failed %s", done["requeued"], done["failed"])
    return done


def experiment_preparation_rerun(*, experiment: Experiment) -> Experiment:
    """Start the preparation again from the upload, when it failed or stalled.

    Everything an earlier run stored goes; the experiment is queued again with its seed, so a run
    that succeeds draws the same sample. Raises ``StateConflict`` when the preparation is running
    and healthy, or is done.
    """
    now = timezone.now()
    rerunnable = Q(status=Status.FAILED) | (Q(status__in=[Status.QUEUED, *STEPS]) & _stalled(now))
    with transaction.atomic():
        restarted = Experiment.objects.filter(rerunnable, pk=experiment.pk).update(
            status=Status.QUEUED,
            updated_at=now,
            progress=0.0,
            error="",
            error_id="",
            error_step="",
            heartbeat_at=None,
            preparation_attempts=0,
            **RESULTS_CLEARED,
        )
        if restarted:
            preparation_rows_delete(experiment_id=experiment.pk)
            transaction.on_commit(lambda: population_delete(experiment_id=experiment.pk))
            outbox_add(kind=OutboxMessage.Kind.EXPERIMENT_PREPARE, target_id=experiment.pk)
    experiment.refresh_from_db()
    if not restarted:
        raise StateConflict(_not_rerunnable(experiment, now))
    return experiment


def preparation_stalled(*, experiment: Experiment, now: datetime | None = None) -> bool:
    """Whether the experiment is preparing with no sign of life for ``PREPARATION_STALL_SECONDS``."""
    now = now or timezone.now()
    if experiment.status not in (Status.QUEUED, *STEPS):
        return False
    last = experiment.heartbeat_at or experiment.updated_at
    return last is not None and last < now - timedelta(seconds=settings.PREPARATION_STALL_SECONDS)


def _stalled(now: datetime) -> Q:
    cutoff = now - timedelta(seconds=settings.PREPARATION_STALL_SECONDS)
    return Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, updated_at__lt=cutoff)


def _not_rerunnable(experiment: Experiment, now: datetime) -> str:
    if experiment.status in (Status.RATING, Status.DONE):
        return "The experiment is prepared already: there is nothing to re-run."
    if experiment.status == Status.QUEUED:
        return "The preparation is queued for a worker; it can be re-run if no worker takes it up."
    last = experiment.heartbeat_at or experiment.updated_at
    seconds = max(0, round((now - last).total_seconds())) if last else 0
    return (
        f"The preparation is running ({experiment.get_status_display().lower()}, last sign of life {seconds} s ago); "
        "it can be re-run once it fails or stalls."
    )
