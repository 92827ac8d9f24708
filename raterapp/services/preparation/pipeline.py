"""Preparing an uploaded experiment for rating: validate and load, impact metrics, sample.

Status: QUEUED -> VALIDATING -> COMPUTING_IMPACT -> SAMPLING -> RATING, or FAILED with the
one-line metrics_core error (file, line or row, problem) in ``Experiment.error``. Any other
error fails it too, with the step (``error_step``) and an error id (``error_id``) under which
the worker logs the traceback; only a lost database connection propagates (the task retries
it, and the heartbeat reconciler takes over if that never succeeds).

Every step is idempotent, so the task may run twice (``acks_late``): a step computes
outside any transaction (updating ``progress``), then in one transaction advances the
status with a conditional update and replaces the step's rows (delete, then create).
A crash (the worker process killed) leaves the status at the step that was running; the
next run (the broker's redelivery, or ``preparation_control.preparations_stalled_requeue`` once
the heartbeat stops) resumes there, up to ``PREPARATION_MAX_ATTEMPTS`` runs.
A run that finds the status moved on (another run finished the step) stops quietly.
Failure is all or nothing: no Item, SampledPair, PairTask or ImpactGroup rows and no
population file are left.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from metrics_core.io import (
    InputError,
    ItemTable,
    read_clustering_against_singletons,
    read_clusterings,
    read_items,
)
from raterapp.exceptions import DATABASE_OUT_OF_REACH
from raterapp.models import Experiment, ExperimentProgress, ImpactGroup, Item, PairTask, SampleBatch, SampledPair
from raterapp.population_files import population_delete, population_write
from raterapp.services.experiments.uploads import LocalUpload, upload_message_for_user, uploads_local_open
from raterapp.services.preparation.catalogue import (
    Catalogue,
    catalogue_attributes_for,
    catalogue_read,
    catalogue_rows_for,
)
from raterapp.services.preparation.ground_truth import ground_truth_metrics_measure
from raterapp.services.preparation.guard import memory_capped, preparation_heartbeat
from raterapp.services.preparation.impact_groups import impact_groups_build
from raterapp.services.preparation.item_labels import item_labels_fit_check
from raterapp.services.preparation.sampled_rows import sampled_rows_build, sampled_rows_save

logger = logging.getLogger(__name__)
Status = Experiment.Status


class _Superseded(Exception):
    """The experiment's status is no longer the one this run is working on."""


@dataclass
class _Run:
    """One run of the preparation: the experiment, its uploads, and the catalogue once read
    (and, Dask engine, the items once opened: their cell table serves every step)."""

    experiment: Experiment
    uploads: dict[str, LocalUpload]
    catalogue: Catalogue | None = None
    dask_items: object | None = None

    @property
    def clustering(self) -> LocalUpload:
        return self.uploads.get("items") or self.uploads["base"]

    def catalogue_get(self) -> Catalogue:
        if self.catalogue is None:
            self.catalogue = catalogue_read(path=self.uploads["catalogue"].path)
        return self.catalogue

    def progress(self, value: float) -> None:
        Experiment.objects.filter(pk=self.experiment.pk, status=self.experiment.status).update(progress=value)

    @transaction.atomic
    def advance(self, to: str, *, replace: Callable[[], None], **fields) -> None:
        """Move to status ``to`` and replace this step's rows, all in one transaction.

        The conditional update comes first: it locks the row, so a concurrent run of the
        same step waits, then finds the status moved on and changes nothing.
        """
        current = self.experiment.status
        changed = Experiment.objects.filter(pk=self.experiment.pk, status=current)
        if not changed.update(status=to, updated_at=timezone.now(), **fields):
            raise _Superseded(current)
        replace()
        self.experiment.status = to
        for name, value in fields.items():
            setattr(self.experiment, name, value)


def experiment_prepare(*, experiment_id: int, after_database_error: bool = False) -> None:
    """Prepare an experiment for rating; resumes a crashed run; does nothing once prepared or failed.

    ``after_database_error``: the run retries one that the database ended (out of reach: a restart,
    a failover), which is not a run lost with its worker: it is not counted again."""
    experiment = _run_start(experiment_id, counted=not after_database_error)
    if experiment is None:
        return
    if experiment.preparation_attempts > settings.PREPARATION_MAX_ATTEMPTS:
        preparation_fail_interrupted(experiment=experiment, runs=experiment.preparation_attempts - 1)
        return
    try:
        with preparation_heartbeat(experiment_id=experiment_id):
            _steps_run(experiment)
    except DATABASE_OUT_OF_REACH:
        raise  # the database is out of reach: nothing can be stored; the task retries
    except MemoryError as exc:
        _fail_unexpected(experiment, _memory_message(experiment), exc)
    except SoftTimeLimitExceeded as exc:
        _fail_unexpected(experiment, _time_limit_message(experiment), exc)
    except Exception as exc:
        _fail_unexpected(experiment, _unexpected_message(experiment, exc), exc)


def _run_start(experiment_id: int, *, counted: bool = True) -> Experiment | None:
    """The experiment, counted as one more run (unless not ``counted``) with a fresh heartbeat;
    None unless it is preparing."""
    Experiment.objects.filter(pk=experiment_id, status=Status.QUEUED).update(status=Status.VALIDATING, progress=0.0)
    runs = F("preparation_attempts") + 1 if counted else F("preparation_attempts")
    started = Experiment.objects.filter(pk=experiment_id, status__in=list(_STEP_OF)).update(
        heartbeat_at=timezone.now(), preparation_attempts=runs
    )
    return Experiment.objects.filter(pk=experiment_id).first() if started else None


def _steps_run(experiment: Experiment) -> None:
    steps, session = _engine_of(experiment)
    with uploads_local_open(experiment=experiment) as uploads, session:
        run = _Run(experiment, uploads)
        # Inside the uploads' block, so that their clean-up runs with the limit lifted. Not for Dask:
        # its cluster keeps the population and spills to disk by itself.
        cap = settings.PREPARATION_MEMORY_LIMIT_MB if experiment.engine == Experiment.Engine.MEMORY else 0
        try:
            with memory_capped(limit_mb=cap):
                while experiment.status in steps:
                    started, status = time.monotonic(), experiment.status
                    steps[status](run)
                    # Arrow's allocator keeps freed blocks; a worker would hold the peak between jobs.
                    pa.default_memory_pool().release_unused()
                    logger.info("experiment %s: step %s took %.2f s", experiment.pk, status, time.monotonic() - started)
        except InputError as exc:
            preparation_fail(
                experiment_id=experiment.pk,
                message=upload_message_for_user(message=str(exc), uploads=uploads),
                step=experiment.status,
            )
        except _Superseded as exc:
            logger.info("experiment %s: left step %s to another run", experiment.pk, exc)


# ---------------------------------------------------------------------------- steps


def _validate(run: _Run) -> None:
    """Read and check the uploads and write the normalised population file."""
    items = _items_read(run.experiment, run.uploads)
    run.progress(0.4)
    _require_fitting_labels(items)
    catalogue = run.catalogue_get()
    run.progress(0.7)
    rows = catalogue_rows_for(catalogue=catalogue, item_ids=items.item_id, items_path=items.path)
    attributes = catalogue_attributes_for(catalogue=catalogue, rows=rows, items=items)
    columns = {
        "item_id": items.item_id,
        "base_cluster": items.base_cluster,
        "exp_cluster": items.exp_cluster,
        "weight": items.weight,
        **attributes,
    }
    ground_truth = run.uploads.get("ground_truth")
    ground_truth_metrics = ground_truth_metrics_measure(items=items, path=ground_truth.path) if ground_truth else None
    name = population_write(experiment_id=run.experiment.pk, columns=columns)
    run.advance(
        Status.COMPUTING_IMPACT,
        replace=lambda: None,
        progress=0.0,
        population_file=name,
        items_count=len(items),
        dropped_items=items.dropped_items,
        ground_truth_metrics=ground_truth_metrics,
    )


def _impact(run: _Run) -> None:
    """Overall impact metrics, and per Base cluster, Exp cluster and slice value."""
    overall, groups = impact_groups_build(experiment=run.experiment, on_progress=run.progress)
    if overall.affected_items == 0:
        raise InputError(run.clustering.path, "no item is affected (Base and Exp are identical): nothing to sample")
    impact = {**overall.as_dict(), "dropped_items": run.experiment.dropped_items}

    def replace() -> None:
        ImpactGroup.objects.filter(experiment=run.experiment).delete()
        ImpactGroup.objects.bulk_create(groups, batch_size=_BATCH)

    run.advance(Status.SAMPLING, replace=replace, progress=0.0, impact=impact)


def _sample(run: _Run) -> None:
    """Draw the pairs; store their items, the pairs and the judgement tasks."""
    rows = sampled_rows_build(experiment=run.experiment, catalogue=run.catalogue_get(), on_progress=run.progress)

    def replace() -> None:
        _rows_delete(run.experiment.pk)
        sampled_rows_save(rows=rows, batch_size=_BATCH)

    run.advance(Status.RATING, replace=replace, progress=1.0)


_STEP_OF: dict[str, Callable[[_Run], None]] = {
    Status.VALIDATING: _validate,
    Status.COMPUTING_IMPACT: _impact,
    Status.SAMPLING: _sample,
}
_BATCH = 5000


def _engine_of(experiment: Experiment) -> tuple[dict[str, Callable[[_Run], None]], contextlib.AbstractContextManager]:
    """The steps of the experiment's engine, and what a run of them holds open (Dask: one
    client for the whole run; imported on use, so Dask loads only where it is needed)."""
    if experiment.engine != Experiment.Engine.DASK:
        return _STEP_OF, contextlib.nullcontext()
    from raterapp.services.preparation import dask_engine

    steps: dict[str, Callable[[_Run], None]] = {
        Status.VALIDATING: dask_engine.dask_validate,
        Status.COMPUTING_IMPACT: dask_engine.dask_impact,
        Status.SAMPLING: lambda run: dask_engine.dask_sample(run, rows_delete=_rows_delete),
    }
    return steps, dask_engine.dask_session()


# ---------------------------------------------------------------------------- helpers


def _items_read(experiment: Experiment, uploads: dict[str, LocalUpload]) -> ItemTable:
    if "items" in uploads:
        return read_items(uploads["items"].path)
    weights = uploads["weights"].path if "weights" in uploads else None
    if experiment.kind == Experiment.Kind.ABSOLUTE:
        return read_clustering_against_singletons(uploads["base"].path, weights)
    return read_clusterings(uploads["base"].path, uploads["exp"].path, weights)


def _require_fitting_labels(items: ItemTable) -> None:
    columns = {"item_id": items.item_id, "base_cluster": items.base_cluster, "exp_cluster": items.exp_cluster}
    item_labels_fit_check(path=items.path, columns=columns)


def _rows_delete(experiment_id: int) -> None:
    for model in (ExperimentProgress, SampleBatch, SampledPair, PairTask, Item):
        model.objects.filter(experiment_id=experiment_id).delete()


# What a preparation stores on its experiment, as it is before one: a failure and a re-run clear it.
RESULTS_CLEARED = {
    "population_file": "",
    "items_count": None,
    "dropped_items": None,
    "impact": None,
    "ground_truth_metrics": None,
}


def preparation_fail(*, experiment_id: int, message: str, step: str = "", error_id: str = "") -> bool:
    """FAILED with ``message`` (and the step and error id), and nothing of the preparation left
    behind; False when the experiment was not preparing (then nothing changes)."""
    message = message.replace("\x00", "\\x00")  # PostgreSQL text holds no NUL; data may put one in a message
    with transaction.atomic():
        failed = Experiment.objects.filter(pk=experiment_id, status__in=[Status.QUEUED, *_STEP_OF]).update(
            status=Status.FAILED,
            updated_at=timezone.now(),
            error=message,
            error_id=error_id,
            error_step=step,
            progress=0.0,
            **RESULTS_CLEARED,
        )
        if failed:
            preparation_rows_delete(experiment_id=experiment_id)
    if failed:
        population_delete(experiment_id=experiment_id)
    logger.info("experiment %s failed in step %s: %s", experiment_id, step or "-", message)
    return bool(failed)


def preparation_rows_delete(*, experiment_id: int) -> None:
    """Every row a preparation writes (call inside the transaction that changes the status)."""
    _rows_delete(experiment_id)
    ImpactGroup.objects.filter(experiment_id=experiment_id).delete()


def preparation_fail_database(*, experiment_id: int, error: BaseException, seconds: float) -> bool:
    """FAILED because the database stayed out of reach for ``seconds`` of retries; False when it
    was not preparing any more (or the database is still out of reach: the heartbeat's reconciler
    then finds the run stalled)."""
    experiment = Experiment.objects.filter(pk=experiment_id, status__in=list(_STEP_OF)).first()
    if experiment is None:
        return False
    message = (
        f"The database was out of reach while {_step_label(experiment)}, and stayed so through retries over "
        f"{seconds:.0f} s ({type(error).__name__}: {str(error).strip()[:200]}). Re-run the preparation once the "
        "database answers"
    )
    return _fail_unexpected(experiment, message)


def preparation_fail_interrupted(*, experiment: Experiment, runs: int) -> bool:
    """FAILED because ``runs`` runs were interrupted (their process killed or lost) at the
    experiment's current step; False when it was not preparing any more."""
    message = (
        f"The preparation was interrupted {runs} times while {_step_label(experiment)} (PREPARATION_MAX_ATTEMPTS): "
        "the worker process was killed (often for lack of memory: see PREPARATION_MEMORY_LIMIT_MB) or lost. "
        "Re-run it once the cause is fixed"
    )
    return _fail_unexpected(experiment, message)


def _fail_unexpected(experiment: Experiment, message: str, exc: BaseException | None = None) -> bool:
    error_id = uuid.uuid4().hex[:12]
    logger.error(
        "experiment %s: preparation failed in step %s, error id %s: %s",
        experiment.pk,
        experiment.status,
        error_id,
        message,
        exc_info=exc,
    )
    message = f"{message} (error id {error_id})"
    return preparation_fail(experiment_id=experiment.pk, message=message, step=experiment.status, error_id=error_id)


def _step_label(experiment: Experiment) -> str:
    return Status(experiment.status).label.lower() if experiment.status in Status.values else experiment.status


def _unexpected_message(experiment: Experiment, exc: Exception) -> str:
    text = " ".join(str(exc).split())
    text = f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__
    return f"Unexpected error while {_step_label(experiment)}: {text}. Re-run the preparation, or report the error id"


def _memory_message(experiment: Experiment) -> str:
    limit = settings.PREPARATION_MEMORY_LIMIT_MB
    return (
        f"The preparation needed more than {limit:,} MB of memory while {_step_label(experiment)}; "
        "raise PREPARATION_MEMORY_LIMIT_MB or use the Dask engine"
    )


def _time_limit_message(experiment: Experiment) -> str:
    return f"The preparation took longer than its time limit while {_step_label(experiment)}"
