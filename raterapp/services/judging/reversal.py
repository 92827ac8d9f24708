"""Taking a stored verdict back out of every count: one rule for a rater's undo and an admin's void."""

from __future__ import annotations

from django.db.models import F

from raterapp.models import Judgement, OutboxMessage, PairTask, RetractedJudgement
from raterapp.services.outbox import outbox_add
from raterapp.services.sampling.verdict_reuse import reused_verdicts_release

from .progress import experiment_progress_move
from .spending import budget_refund


def verdict_reverse(*, judgement: Judgement, voided_by=None) -> RetractedJudgement:
    """Move the verdict to :class:`RetractedJudgement` (kept for the record, counted nowhere) and
    reverse everything it moved: the task wants it again (so the queue offers the pair while
    replication asks for it), tasks that reused it in other experiments want one more, the budget
    and the pool its spend charged get the unit back (a refund in the ledger), the experiment's
    progress row moves back and its estimates are recomputed.

    Call it in a transaction holding the rater's and the task's locks (the rater's first);
    ``voided_by`` is the admin of a void, ``None`` for the rater's own undo."""
    task = judgement.task
    retracted = RetractedJudgement.objects.create(
        task=task,
        rater_id=judgement.rater_id,
        verdict=judgement.verdict,
        comment=judgement.comment,
        client_id=judgement.client_id,
        judged_at=judgement.created_at,
        voided_by=voided_by,
    )
    reused_verdicts_release(judgement_id=judgement.pk)
    Judgement.objects.filter(pk=judgement.pk).delete()
    PairTask.objects.filter(pk=task.pk).update(verdicts=F("verdicts") - 1)
    budget_refund(experiment_id=task.experiment_id, rater=judgement.rater, verdict=judgement.client_id)
    outbox_add(kind=OutboxMessage.Kind.ESTIMATES_REFRESH, target_id=task.experiment_id)
    if not task.is_gold:
        experiment_progress_move(experiment_id=task.experiment_id, verdicts=-1)
    return retracted
