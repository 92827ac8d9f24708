"""What an experiment's owner (or an admin) changes after the upload: the precision target,
and whether rating is open."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from raterapp.models import Experiment

Status = Experiment.Status


def experiment_target_set(*, experiment: Experiment, target_half_width: float) -> Experiment:
    """Set the ΔPrecision half-width at which the experiment has enough data (0 < target <= 1)."""
    if not 0.0 < target_half_width <= 1.0:
        raise ValidationError({"target_half_width": "The target half-width must be above 0 and at most 1."})
    experiment.target_half_width = target_half_width
    experiment.save(update_fields=["target_half_width", "updated_at"])
    return experiment


def experiment_rating_close(*, experiment: Experiment) -> Experiment:
    """Close rating (status DONE): raters get no more pairs; every verdict given stays."""
    return _move(
        experiment, source=Status.RATING, target=Status.DONE, problem="Only an experiment in rating can be closed."
    )


def experiment_rating_reopen(*, experiment: Experiment) -> Experiment:
    """Open a closed experiment for rating again."""
    return _move(
        experiment, source=Status.DONE, target=Status.RATING, problem="Only a closed experiment can be reopened."
    )


def _move(experiment: Experiment, *, source: str, target: str, problem: str) -> Experiment:
    with transaction.atomic():
        moved = Experiment.objects.filter(pk=experiment.pk, status=source).update(
            status=target, updated_at=timezone.now()
        )
    if not moved:
        raise ValidationError({"status": problem})
    experiment.refresh_from_db()
    return experiment
