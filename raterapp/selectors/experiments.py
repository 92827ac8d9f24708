"""Reads of experiments for engineers: lists, judging progress, impact groups, estimate snapshots.

Visibility is decided by ``raterapp.access``; these functions take experiments (or the
user) that passed it.
"""

from __future__ import annotations

from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import Coalesce

from raterapp.access import experiments_visible_to
from raterapp.models import EstimateSnapshot, Experiment, ImpactGroup, PairTask


def experiment_list(*, user, archived: bool | None = False) -> QuerySet[Experiment]:
    """Experiments the user may see, newest first: those not archived (``archived=False``),
    the archived ones (``True``) or all (``None``)."""
    experiments = experiments_visible_to(user)
    if archived is not None:
        experiments = experiments.filter(archived_at__isnull=not archived)
    return experiments.select_related("owner").order_by("-created_at", "-pk")


def experiment_judging_progress_get(*, experiment: Experiment) -> dict:
    """How far rating has come: sampled tasks, verdicts received and verdicts wanted (gold questions aside)."""
    totals = (
        PairTask.objects.sampled()
        .filter(experiment=experiment)
        .aggregate(tasks=Count("pk"), verdicts=Coalesce(Sum("verdicts"), 0), wanted=Coalesce(Sum("wanted"), 0))
    )
    return {**totals, "done": totals["wanted"] > 0 and totals["verdicts"] == totals["wanted"]}


def impact_dimensions_list(*, experiment: Experiment) -> list[str]:
    """The dimensions the experiment's impact is broken down by ('base', 'exp', slices)."""
    return list(
        ImpactGroup.objects.filter(experiment=experiment)
        .order_by("dimension")
        .values_list("dimension", flat=True)
        .distinct()
    )


def impact_groups_list(*, experiment: Experiment, dimension: str | None = None) -> QuerySet[ImpactGroup]:
    """Impact rows of the experiment, per dimension, heaviest group first."""
    groups = ImpactGroup.objects.filter(experiment=experiment)
    if dimension:
        groups = groups.filter(dimension=dimension)
    return groups.order_by("dimension", "-weight", "label")


def newest_first(model, *, experiment: Experiment) -> QuerySet:
    """The experiment's stored results of ``model`` (snapshots, derived, rater-aware), the latest
    first; of two stored in the same instant, the later row."""
    return model.objects.filter(experiment=experiment).order_by("-created_at", "-pk")


def estimate_snapshot_latest(*, experiment: Experiment) -> EstimateSnapshot | None:
    return newest_first(EstimateSnapshot, experiment=experiment).first()


def estimate_snapshots_list(*, experiment: Experiment) -> QuerySet[EstimateSnapshot]:
    """Every snapshot, oldest first: the history of the estimates as verdicts came in."""
    return EstimateSnapshot.objects.filter(experiment=experiment).order_by("created_at", "pk")


ARCHIVED_CHOICES = {"false": False, "true": True, "all": None}


def archived_filter(params) -> bool | None:
    """The ``archived`` query parameter as ``experiment_list`` takes it (anything else: hidden)."""
    return ARCHIVED_CHOICES.get(str(params.get("archived", "false")).lower(), False)
