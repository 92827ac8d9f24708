"""A rater's quotas, enforced where a verdict is stored (leasing checks them too, but a
verdict can arrive on a lease that expired long ago, or from many sessions at once)."""

from __future__ import annotations

from raterapp.selectors.judging import rater_quota_left

from .errors import JudgementRefused


class QuotaSpent(JudgementRefused):
    """The verdict would take the rater past their daily or total quota."""


def quota_consume(*, rater, task_id: int) -> None:
    """Refuse (:class:`QuotaSpent`) a verdict on ``task_id`` beyond the rater's quotas.

    Call it in the verdict's transaction with the rater's row locked (``rater_lock``): every
    submit, lease and undo of the rater queues on that lock, so the counts read here are
    final until the verdict commits. The rater's live leases on other pairs count as given,
    as when leasing: a late verdict never takes a unit promised to a pair on their screen.
    """
    daily_left, total_left = rater_quota_left(rater=rater, besides_task_id=task_id)
    if daily_left == 0:
        raise QuotaSpent("You reached your daily quota of verdicts: this verdict was not recorded.")
    if total_left == 0:
        raise QuotaSpent("You reached your quota of verdicts: this verdict was not recorded.")
