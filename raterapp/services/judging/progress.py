"""The row that counts the verdicts an experiment's sample still wants (``ExperimentProgress``)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F, Sum
from django.db.models.functions import Coalesce

from raterapp.access import task_in_rating_q
from raterapp.models import ExperimentProgress, PairTask


def experiment_progress_recount(*, experiment_id: int) -> int:
    """Write the count from the experiment's tasks (after tasks were added or their replication
    changed, not per verdict); the verdicts still wanted.

    The row is locked before the tasks are summed: a verdict that commits meanwhile moves the row
    after this write (it waits for the lock), one committed before is in the sum, so none is lost.
    """
    with transaction.atomic():
        ExperimentProgress.objects.get_or_create(experiment_id=experiment_id)
        ExperimentProgress.objects.select_for_update().filter(experiment_id=experiment_id).values_list("pk").get()
        left = PairTask.objects.filter(task_in_rating_q(), experiment_id=experiment_id).aggregate(
            left=Coalesce(Sum("wanted"), 0) - Coalesce(Sum("verdicts"), 0)
        )["left"]
        ExperimentProgress.objects.filter(experiment_id=experiment_id).update(verdicts_left=left)
    return left


def experiment_progress_move(*, experiment_id: int, verdicts: int) -> None:
    """``verdicts`` more (or, negative, fewer) verdicts received on sampled pairs; call it last in
    the verdict's transaction, which then holds the row's lock only until it commits."""
    ExperimentProgress.objects.filter(experiment_id=experiment_id).update(verdicts_left=F("verdicts_left") - verdicts)
