"""Whether an experiment's estimates lag its verdicts: the dashboard's "Stale since …" and the
reconciler's list of experiments to recompute.

The latest snapshot lags when the verdicts now stored are not the ones it was computed from: their
number differs, or a verdict was given or undone after it. A refresh normally follows within
``ESTIMATES_DEBOUNCE_SECONDS`` and a moment, so a lag counts as stale only once it is older than
``ESTIMATES_STALE_SECONDS`` (a refresh was lost: the broker was away, a worker died).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone

from raterapp.models import (
    AuditEntry,
    EstimateSnapshot,
    Experiment,
    Judgement,
    RetractedJudgement,
    ReusedVerdict,
    sampled_q,
)
from raterapp.vocabulary import STALE_HELP, stale_label

RATED = (Experiment.Status.RATING, Experiment.Status.DONE)


def estimates_staleness_get(*, experiment: Experiment, snapshot: EstimateSnapshot | None = None) -> dict | None:
    """``None`` while the estimates are current (or lag for less than ``ESTIMATES_STALE_SECONDS``);
    else since when they lag, the verdicts stored and the verdicts the latest snapshot counted."""
    if snapshot is None:
        snapshot = _latest(experiment.pk)
    verdicts, since = _lag(experiment.pk, snapshot)
    if since is None or since > _stale_before():
        return None
    return {
        "since": since.isoformat(),
        "label": stale_label(since),
        "help": STALE_HELP,
        "verdicts": verdicts,
        "estimated_verdicts": snapshot.judgements if snapshot is not None else 0,
    }


def experiments_stale_list() -> list[int]:
    """Ids of the experiments (open for rating or done) whose estimates are stale."""
    stale = []
    for experiment_id in Experiment.objects.filter(status__in=RATED).order_by("pk").values_list("pk", flat=True):
        _, since = _lag(experiment_id, _latest(experiment_id))
        if since is not None and since <= _stale_before():
            stale.append(experiment_id)
    return stale


def _latest(experiment_id: int) -> EstimateSnapshot | None:
    return EstimateSnapshot.objects.filter(experiment_id=experiment_id).order_by("-created_at", "-pk").first()


def _lag(experiment_id: int, snapshot: EstimateSnapshot | None) -> tuple[int, datetime | None]:
    """The verdicts counted in estimates, and since when the snapshot lags them (None: it does not)."""
    judgements = Judgement.objects.filter(sampled_q("task__"), task__experiment_id=experiment_id)
    totals = judgements.aggregate(n=Count("pk"), first=Min("created_at"))
    # Reused verdicts (abcde-spec §11) are counted in the estimates from the sampling on.
    reused = ReusedVerdict.objects.filter(experiment_id=experiment_id).aggregate(n=Count("pk"), first=Min("created_at"))
    totals["n"] += reused["n"]
    totals["first"] = min((t for t in (totals["first"], reused["first"]) if t is not None), default=None)
    if snapshot is None:
        return totals["n"], totals["first"]
    newer = judgements.filter(created_at__gt=snapshot.created_at).aggregate(t=Min("created_at"))["t"]
    undone = RetractedJudgement.objects.filter(
        sampled_q("task__"), task__experiment_id=experiment_id, retracted_at__gt=snapshot.created_at
    ).aggregate(t=Min("retracted_at"))["t"]
    # A verdict its rater changed in place keeps its time: the audit log says when it changed.
    changed = AuditEntry.objects.filter(
        action=AuditEntry.Action.VERDICT_CHANGE, experiment_id=experiment_id, created_at__gt=snapshot.created_at
    ).aggregate(t=Min("created_at"))["t"]
    since = min((t for t in (newer, undone, changed) if t is not None), default=None)
    if since is None and totals["n"] != snapshot.judgements:
        since = snapshot.created_at  # a verdict committed after the snapshot was read, with an older time
    return totals["n"], since


def _stale_before() -> datetime:
    return timezone.now() - timedelta(seconds=settings.ESTIMATES_STALE_SECONDS)
