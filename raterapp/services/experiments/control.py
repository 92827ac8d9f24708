"""What an experiment's owner (or an admin) changes after the upload: the precision target, the
decision rule, the model-assisted estimates, whether rating is open, and whether it is archived."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from metrics_core import metrics_for_scheme
from raterapp.models import Experiment
from raterapp.services.scheduling import DERIVED_REFRESH, ESTIMATES_REFRESH

Status = Experiment.Status


def experiment_target_set(*, experiment: Experiment, target_half_width: float) -> Experiment:
    """Set the ΔPrecision half-width at which the experiment has enough data (0 < target <= 1)."""
    if not 0.0 < target_half_width <= 1.0:
        raise ValidationError({"target_half_width": "The target half-width must be above 0 and at most 1."})
    experiment.target_half_width = target_half_width
    experiment.save(update_fields=["target_half_width", "updated_at"])
    return experiment


def experiment_decision_set(*, experiment: Experiment, decision_metric: str, equivalence_margin: float) -> Experiment:
    """Choose the metric that decides (empty: the scheme's default) and the equivalence margin
    (abcde-spec §9): a difference metric of the scheme, and a margin in [0, 1)."""
    allowed = deciding_metrics_for(experiment.scheme)
    if decision_metric and decision_metric not in allowed:
        raise ValidationError({"decision_metric": f"Choose one of: {', '.join(allowed)} (or leave it empty)."})
    if not (isinstance(equivalence_margin, (int, float)) and 0.0 <= equivalence_margin < 1.0):
        raise ValidationError({"equivalence_margin": "The margin must be at least 0 and below 1."})
    experiment.decision_metric = decision_metric
    experiment.equivalence_margin = float(equivalence_margin)
    experiment.save(update_fields=["decision_metric", "equivalence_margin", "updated_at"])
    return experiment


def experiment_recall_base_set(
    *, experiment: Experiment, recall_base_low: float, recall_base_high: float
) -> Experiment:
    """Set the Recall_Base(AffectedItems) range ΔRecall and IQ assume (abcde-spec §14; 0 < low ≤ high ≤ 1)
    and recompute them (a ground-truth clustering's own Recall_Base still takes precedence)."""
    if not 0.0 < recall_base_low <= recall_base_high <= 1.0:
        raise ValidationError({"recall_base_low": "The range must satisfy 0 < low ≤ high ≤ 1."})
    experiment.recall_base_low, experiment.recall_base_high = float(recall_base_low), float(recall_base_high)
    experiment.save(update_fields=["recall_base_low", "recall_base_high", "updated_at"])
    if experiment.status in (Status.RATING, Status.DONE):
        transaction.on_commit(lambda: DERIVED_REFRESH.schedule(experiment.pk))
    return experiment


def experiment_model_assisted_set(*, experiment: Experiment, model_assisted: bool) -> Experiment:
    """Turn the model-assisted estimates on or off (abcde-spec §15) and estimate again: on, every
    estimate and the headline use the pairs' scores; off, the human-only estimates."""
    experiment.model_assisted = bool(model_assisted)
    experiment.save(update_fields=["model_assisted", "updated_at"])
    if experiment.status in (Status.RATING, Status.DONE):
        transaction.on_commit(lambda: ESTIMATES_REFRESH.schedule(experiment.pk))
    return experiment


def deciding_metrics_for(scheme: str) -> tuple[str, ...]:
    """The metrics that can decide: differences between Exp and Base, zero when nothing changed."""
    return tuple(name for name in metrics_for_scheme(scheme) if name in ("DeltaPrecision", "GoodMinusBadDistance"))


def experiment_rating_close(*, experiment: Experiment) -> Experiment:
    """Close rating (status DONE): raters get no more pairs; every verdict given stays."""
    return _move(
        experiment, source=Status.RATING, target=Status.DONE, problem="Only an experiment in rating can be closed."
    )


def experiment_rating_reopen(*, experiment: Experiment) -> Experiment:
    """Open a closed experiment for rating again (an archived one comes back to the list)."""
    return _move(
        experiment,
        source=Status.DONE,
        target=Status.RATING,
        problem="Only a closed experiment can be reopened.",
        archived_at=None,
    )


ARCHIVABLE = (Status.DONE, Status.FAILED)


def experiment_archive(*, experiment: Experiment) -> Experiment:
    """Hide a finished or failed experiment from the default list; everything it holds stays.
    One still preparing or in rating is refused: close its rating first."""
    with transaction.atomic():
        archived = Experiment.objects.filter(pk=experiment.pk, status__in=ARCHIVABLE, archived_at__isnull=True).update(
            archived_at=timezone.now(), updated_at=timezone.now()
        )
    experiment.refresh_from_db()
    if not archived and experiment.archived_at is None:
        raise ValidationError({"archived": "Only a finished (rating closed) or failed experiment can be archived."})
    return experiment


def experiment_unarchive(*, experiment: Experiment) -> Experiment:
    """Show an archived experiment in the default list again."""
    Experiment.objects.filter(pk=experiment.pk).update(archived_at=None, updated_at=timezone.now())
    experiment.refresh_from_db()
    return experiment


def _move(experiment: Experiment, *, source: str, target: str, problem: str, **also) -> Experiment:
    with transaction.atomic():
        moved = Experiment.objects.filter(pk=experiment.pk, status=source).update(
            status=target, updated_at=timezone.now(), **also
        )
    if not moved:
        raise ValidationError({"status": problem})
    experiment.refresh_from_db()
    return experiment
