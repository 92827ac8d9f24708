"""Deleting a failed experiment: its rows and its files (uploads, population), for its owner or an
admin, audited. Only a failed one: an experiment that was rated holds verdicts, which are archived,
never deleted."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from django.core.files.storage import default_storage
from django.db import transaction

from raterapp.exceptions import StateConflict
from raterapp.models import AuditEntry, Experiment
from raterapp.services.audit import audit_record

logger = logging.getLogger(__name__)


def experiment_delete(*, actor, experiment: Experiment) -> None:
    """Delete the failed ``experiment`` with everything it stored; the audit log keeps who did it,
    when, and the experiment's id and name. :class:`StateConflict` unless it failed."""
    with transaction.atomic():
        locked = Experiment.objects.select_for_update().filter(pk=experiment.pk).first()
        if locked is None:
            return
        if locked.status != Experiment.Status.FAILED:
            raise StateConflict("Only a failed experiment can be deleted; archive a finished one instead.")
        audit_record(
            actor=actor,
            action=AuditEntry.Action.EXPERIMENT_DELETE,
            subject_id=locked.owner_id,
            field="experiment",
            old=f"{locked.pk}: {locked.name}"[:200],
        )
        folder = Path(default_storage.path(f"experiments/{locked.pk}"))  # its uploads and population file
        locked.delete()
        transaction.on_commit(lambda: _files_delete(folder))


def _files_delete(folder: Path) -> None:
    """The experiment's folder (uploads and population file), once its rows are gone: a failure to
    delete leaves files nobody reads, and is logged."""
    try:
        shutil.rmtree(folder, ignore_errors=False)
    except FileNotFoundError:
        pass
    except OSError as error:
        logger.warning("files of a deleted experiment left at %s: %s", folder, error)
