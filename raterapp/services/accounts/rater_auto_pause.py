"""The optional automatic pause of raters the rater-quality flags point at (``RATER_AUTO_PAUSE``).

Kept off the verdict's path: each recorded verdict asks, on commit, for a check of its
rater, and the checks of one rater run at most once a minute. The first verdict sets a
pending key in the cache and schedules the Celery task ``raterapp.raters_auto_pause``
``AUTO_PAUSE_INTERVAL_SECONDS`` later (``services/scheduling.py``); verdicts that find the key
do nothing. The check
deletes the key before it reads anything, so a verdict given while it runs schedules the
next one, and the last verdict of a burst is always looked at.

A flagged rater (``too_fast`` or ``low_gold_accuracy``, see ``selectors/raters.py``) is
paused with a reason that names the flag and the numbers; an admin unpauses them. The
check looks only at verdicts given since the rater was last unpaused by an admin, so an
admin's decision to let them back in is not overruled on the same evidence.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model

from raterapp.access import ADMIN, RATER, require_role
from raterapp.models import RaterProfile
from raterapp.selectors.raters import rater_stats_list
from raterapp.services.scheduling import rater_auto_pause_started


def raters_auto_pause(*, actor=None, rater_ids: list[int] | None = None) -> list[int]:
    """Pause the flagged raters among ``rater_ids`` (all raters when ``None``) who are active
    and not paused yet, when ``RATER_AUTO_PAUSE`` is on; the ids of those paused.

    ``actor`` is an admin running the check by hand, or ``None`` for the scheduled task.
    """
    if actor is not None:
        require_role(actor, ADMIN, "Only admins manage raters.")
    if not settings.RATER_AUTO_PAUSE:
        return []
    from raterapp.services.accounts.raters import rater_pause_record  # raters → judging → verdicts → here

    for rater_id in rater_ids or ():
        rater_auto_pause_started(rater_id)
    users = get_user_model().objects.filter(is_active=True)
    users = users.filter(pk__in=rater_ids) if rater_ids is not None else users.filter(groups__name=RATER)
    candidates = set(users.values_list("pk", flat=True)) - set(
        RaterProfile.objects.filter(paused=True).values_list("user", flat=True)
    )
    since_of = dict(RaterProfile.objects.filter(user__in=candidates).values_list("user", "unpaused_at"))
    paused = []
    for since, ids in _group_by_since(candidates, since_of).items():
        for row in rater_stats_list(raters=ids, since=since, agreement=False):
            if row["flags"]:
                rater_pause_record(rater_id=row["rater"], reason=auto_pause_reason(row))
                paused.append(row["rater"])
    return sorted(paused)


def auto_pause_reason(row: dict) -> str:
    """The pause reason for a flagged stats row: each flag with its numbers and threshold."""
    parts = []
    if "too_fast" in row["flags"]:
        parts.append(
            f"too_fast: median {row['median_seconds']:.1f} s per verdict over {row['timed_verdicts']} verdicts, "
            f"below {settings.RATER_MIN_SECONDS:g} s"
        )
    if "low_gold_accuracy" in row["flags"]:
        sure = row["gold_answered"] - row["gold_unsure"]
        parts.append(
            f"low_gold_accuracy: {row['gold_correct']} of {sure} gold answers right ({row['gold_accuracy']:.0%}), "
            f"below {settings.RATER_MIN_GOLD_ACCURACY:.0%}"
        )
    return "Paused automatically. " + "; ".join(parts) + "."


def _group_by_since(ids: set[int], since_of: dict) -> dict:
    groups: dict = {}
    for rater_id in sorted(ids):
        groups.setdefault(since_of.get(rater_id), []).append(rater_id)
    return groups
