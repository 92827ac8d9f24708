"""What admins (and engineers, for their experiments) see of raters: how much, how fast, how
well, and how far they agree with each other.

Per rater, over the verdicts in scope (one experiment or all; since a moment or ever):

- ``verdicts``, ``unsure`` and ``unsure_share``: every stored verdict, gold questions
  included (the rater cannot tell them apart); undone verdicts are not stored.
- ``median_seconds``: the median gap between a verdict and the same rater's previous
  verdict (in any experiment, even one before ``since``), over the gaps shorter than
  ``BREAK_SECONDS`` (10 minutes): a longer gap is a break, or the start of a session, and
  says nothing about the time a verdict took. ``timed_verdicts`` counts those gaps.
- gold accuracy among the sure answers to gold questions, with its Wilson interval (at the
  experiment's confidence; 0.95 across experiments), as ``gold_accuracy_list`` computes it.
- agreement with the other raters on replicated (non-gold) pairs, from
  ``metrics_core.rater_agreement``: the mean of Cohen's kappa against each other rater,
  weighted by the pairs they share, and the share of verdicts that agree with the majority
  of the other raters. It reads every replicated verdict in scope, so the lists of raters (one
  experiment or all, ever) read it as the worker stored it after the latest snapshot
  (:class:`RaterAgreement`, ``services/refresh/rater_agreement.py``): empty until first computed,
  as ``rater_agreement_computed_get`` tells. What the worker cannot have computed is read here:
  with ``since`` (the other raters' verdicts count from then on too), from the verdicts in that
  window; for raters given (one row), from the verdicts on the pairs they judged.
- flags: ``too_fast`` (median seconds below ``RATER_MIN_SECONDS`` over at least
  ``RATER_MIN_TIMED_VERDICTS`` gaps) and ``low_gold_accuracy`` (accuracy below
  ``RATER_MIN_GOLD_ACCURACY`` on at least ``RATER_MIN_GOLD_ANSWERS`` sure gold answers).

Every number comes from numpy or metrics_core; this module moves rows into arrays and back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Count, F, Max, Q

from metrics_core import agreement_summary, pairwise_cohens_kappa, rater_agreement
from metrics_core.results import json_number
from raterapp.access import RATER
from raterapp.models import Experiment, Judgement, RaterAgreement, RaterProfile, Verdict, sampled_q
from raterapp.selectors.rater_aware import experiment_rater_fits_get
from raterapp.selectors.rater_quality import gold_accuracy_row
from raterapp.selectors.rating_access import experiment_rating_access_get

BREAK_SECONDS = 600
DEFAULT_CONFIDENCE = 0.95
FLAGS = ("too_fast", "low_gold_accuracy")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def rater_stats_list(
    *,
    experiment: Experiment | None = None,
    since: datetime | None = None,
    raters: Iterable[int] | None = None,
    agreement: bool = True,
) -> list[dict]:
    """One row per rater (see the module docstring), sorted by user name.

    The raters: those given (ids), else the members of the ``rater`` group and anyone with
    a verdict in scope, and for an experiment its assigned raters and anyone with a verdict
    in it. ``agreement=False`` leaves the agreement columns empty (the automatic pause needs only
    speed and gold). Without raters given or ``since``, the agreement is the worker's stored one;
    for raters given, it reads only the replicated verdicts on the pairs they judged, which are all
    it depends on; with ``since``, every replicated verdict in the window.
    """
    verdicts = _scope(Judgement.objects.all(), experiment=experiment, since=since)
    ids = set(raters) if raters is not None else _raters_of(experiment=experiment, verdicts=verdicts)
    users = list(
        get_user_model().objects.filter(pk__in=ids).values("pk", "username", "email", "is_active").order_by("username")
    )
    counts = _counts(verdicts.filter(rater__in=ids))
    speed = _speed(rater_ids=ids, experiment=experiment, since=since)
    agree = {}
    if agreement and raters is None and since is None:
        agree = _agreement_stored(experiment=experiment)
    elif agreement:
        agree = _agreement(experiment=experiment, since=since, of_raters=ids if raters is not None else None)
    profiles = {p.user_id: p for p in RaterProfile.objects.filter(user__in=ids)}
    confidence = experiment.confidence if experiment is not None else DEFAULT_CONFIDENCE
    rows = []
    for user in users:
        rater_id = user["pk"]
        n = counts.get(rater_id, {})
        gold = gold_accuracy_row(
            answered=n.get("gold", 0),
            unsure=n.get("gold_unsure", 0),
            correct=n.get("gold_correct", 0),
            confidence=confidence,
        )
        row = {
            "rater": rater_id,
            "username": user["username"],
            **_profile_fields(user, profiles.get(rater_id)),
            "verdicts": n.get("verdicts", 0),
            "unsure": n.get("unsure", 0),
            "unsure_share": n["unsure"] / n["verdicts"] if n.get("verdicts") else None,
            "last_verdict_at": n.get("last"),
            **speed.get(rater_id, {"timed_verdicts": 0, "median_seconds": None}),
            **{f"gold_{key}": value for key, value in gold.items()},
            **agree.get(rater_id, _NO_AGREEMENT),
        }
        row["flags"] = rater_flags(row)
        row.update({flag: flag in row["flags"] for flag in FLAGS})
        rows.append(row)
    return rows


def rater_flags(row: dict) -> list[str]:
    """The rater-quality flags a stats row raises, by the thresholds in settings."""
    flags = []
    median = row["median_seconds"]
    if row["timed_verdicts"] >= max(settings.RATER_MIN_TIMED_VERDICTS, 1) and median < settings.RATER_MIN_SECONDS:
        flags.append("too_fast")
    sure = row["gold_answered"] - row["gold_unsure"]
    if sure >= max(settings.RATER_MIN_GOLD_ANSWERS, 1) and row["gold_accuracy"] < settings.RATER_MIN_GOLD_ACCURACY:
        flags.append("low_gold_accuracy")
    return flags


def rater_agreement_computed_get(*, experiment: Experiment | None = None) -> Mapping[str, Any] | None:
    """When the stored agreement of the scope (one experiment, or all) was computed and from how
    many replicated verdicts; ``None`` before the worker first computed it."""
    return RaterAgreement.objects.filter(experiment=experiment).values("computed_at", "judgements").first()


def rater_agreement_compute(*, experiment: Experiment | None) -> tuple[dict[int, dict], int]:
    """Each rater's agreement (the columns of a stats row) from every replicated verdict in scope,
    and how many verdicts that is: what the worker stores after a snapshot."""
    columns = _replicated_rows(experiment=experiment, since=None)
    return _agreement_rows(*columns), len(columns[0])


def experiment_agreement_get(*, experiment: Experiment) -> dict:
    """Agreement among the raters of the experiment's replicated (non-gold) pairs: the overall
    coefficients (Fleiss' kappa, Krippendorff's alpha, Gwet's AC1, ...), each rater's
    agreement with the others, and Cohen's kappa of every two raters who share pairs."""
    task, rater, verdict = _replicated_rows(experiment=experiment, since=None)
    summary = agreement_summary(unit=task, verdict=verdict, rater=rater)
    pairs = pairwise_cohens_kappa(unit=task, verdict=verdict, rater=rater)
    names = dict(get_user_model().objects.filter(pk__in=set(rater.tolist())).values_list("pk", "username"))
    per_rater = _agreement_rows(task, rater, verdict)
    return {
        "experiment": experiment.pk,
        "summary": summary.as_dict(),
        "raters": [
            {"rater": rater_id, "username": names.get(rater_id, ""), **row}
            for rater_id, row in sorted(per_rater.items(), key=lambda item: names.get(item[0], ""))
        ],
        "pairwise": [
            {
                "rater_a": int(p.rater_a),
                "rater_a_username": names.get(int(p.rater_a), ""),
                "rater_b": int(p.rater_b),
                "rater_b_username": names.get(int(p.rater_b), ""),
                "pairs": p.units,
                "kappa": json_number(p.kappa),
            }
            for p in pairs
        ],
    }


def rater_detail_get(*, rater) -> dict:
    """A rater's numbers across experiments, with the experiments they are assigned to."""
    (row,) = rater_stats_list(raters=[rater.pk])
    assigned = rater.assigned_experiments.order_by("-created_at", "-pk").values("id", "name", "status")
    return {**row, "assigned_experiments": list(assigned)}


def experiment_raters_get(*, experiment: Experiment) -> dict:
    """Who may rate the experiment (its assigned raters; none: every rater if it is open to
    all raters, else nobody: :mod:`raterapp.selectors.rating_access`) and the numbers
    of its assigned raters and of everyone with a verdict in it."""
    assigned = list(
        experiment.assigned_raters.order_by("username").values("pk", "username", "is_active", "rater_profile__paused")
    )
    access = experiment_rating_access_get(experiment=experiment)
    return {
        "experiment": experiment.pk,
        **{key: access[key] for key in ("open_to_all", "who")},
        "assigned": [
            {
                "rater": a["pk"],
                "username": a["username"],
                "is_active": a["is_active"],
                "paused": bool(a["rater_profile__paused"]),
            }
            for a in assigned
        ],
        "raters": rater_stats_list(experiment=experiment),
        "fits": experiment_rater_fits_get(experiment=experiment),
    }


# ---- rows ---------------------------------------------------------------------------------

_NO_AGREEMENT = {
    "replicated_verdicts": 0,
    "mean_kappa": None,
    "kappa_raters": 0,
    "majority_verdicts": 0,
    "majority_share": None,
}


def _scope(verdicts, *, experiment: Experiment | None, since: datetime | None):
    if experiment is not None:
        verdicts = verdicts.filter(task__experiment=experiment)
    if since is not None:
        verdicts = verdicts.filter(created_at__gte=since)
    return verdicts


def _raters_of(*, experiment: Experiment | None, verdicts) -> set[int]:
    judged = set(verdicts.values_list("rater", flat=True).distinct())
    if experiment is not None:
        return judged | set(experiment.assigned_raters.values_list("pk", flat=True))
    return judged | set(get_user_model().objects.filter(groups__name=RATER).values_list("pk", flat=True))


def _profile_fields(user: Mapping[str, Any], profile: RaterProfile | None) -> dict:
    return {
        "email": user["email"],
        "is_active": user["is_active"],
        "daily_quota": profile.daily_quota if profile else None,
        "total_quota": profile.total_quota if profile else None,
        "paused": profile.paused if profile else False,
        "paused_reason": profile.paused_reason if profile else "",
        "paused_at": profile.paused_at if profile else None,
    }


def _counts(verdicts) -> dict[int, dict]:
    gold = ~sampled_q("task__")
    rows = (
        verdicts.values("rater")
        .annotate(
            verdicts=Count("pk"),
            unsure=Count("pk", filter=Q(verdict=Verdict.UNSURE)),
            gold=Count("pk", filter=gold),
            gold_unsure=Count("pk", filter=gold & Q(verdict=Verdict.UNSURE)),
            gold_correct=Count("pk", filter=gold & Q(verdict=F("task__gold_answer"))),
            last=Max("created_at"),
        )
        .order_by()
    )
    return {row.pop("rater"): row for row in rows}


def _speed(*, rater_ids: set[int], experiment: Experiment | None, since: datetime | None) -> dict[int, dict]:
    """Per rater: the gaps under ``BREAK_SECONDS`` before each verdict in scope, and their median."""
    times = Judgement.objects.filter(rater__in=rater_ids)
    if since is not None:
        times = times.filter(created_at__gte=since - timedelta(seconds=BREAK_SECONDS))
    rows = list(times.values_list("rater", "created_at", "task__experiment"))
    if not rows:
        return {}
    rater = np.array([r[0] for r in rows], dtype=np.int64)
    micros = np.array([_micros(r[1]) for r in rows], dtype=np.int64)
    in_scope = np.ones(len(rows), dtype=bool)
    if experiment is not None:
        in_scope &= np.array([r[2] for r in rows]) == experiment.pk
    if since is not None:
        in_scope &= micros >= _micros(since)
    order = np.lexsort((micros, rater))
    rater, micros, in_scope = rater[order], micros[order], in_scope[order]
    gap = np.diff(micros)
    timed = (rater[1:] == rater[:-1]) & in_scope[1:] & (gap < BREAK_SECONDS * 1_000_000)
    result = {}
    for rater_id in np.unique(rater[1:][timed]).tolist():
        gaps = gap[timed & (rater[1:] == rater_id)]
        result[rater_id] = {"timed_verdicts": len(gaps), "median_seconds": float(np.median(gaps)) / 1e6}
    return result


def _micros(moment: datetime) -> int:
    """Microseconds since the epoch, exactly (float timestamps round at this magnitude)."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


def _replicated_rows(
    *, experiment: Experiment | None, since: datetime | None, of_raters: set[int] | None = None
) -> tuple[np.ndarray, ...]:
    """``(task, rater, verdict)`` of the non-gold verdicts in scope on tasks judged more than once
    (and, with ``of_raters``, judged by one of them)."""
    verdicts = _scope(
        Judgement.objects.filter(sampled_q("task__"), task__verdicts__gte=2), experiment=experiment, since=since
    )
    if of_raters is not None:
        verdicts = verdicts.filter(
            task__in=_scope(Judgement.objects.filter(rater__in=of_raters), experiment=experiment, since=since).values(
                "task"
            )
        )
    rows = list(verdicts.values_list("task", "rater", "verdict"))
    columns = list(zip(*rows)) if rows else [(), (), ()]
    return (
        np.array(columns[0], dtype=np.int64),
        np.array(columns[1], dtype=np.int64),
        np.array(columns[2], dtype=object),
    )


def _agreement(
    *, experiment: Experiment | None, since: datetime | None, of_raters: set[int] | None = None
) -> dict[int, dict]:
    """Each rater's agreement (of ``of_raters`` only, when given: a rater's numbers depend only on
    the verdicts on the pairs they judged)."""
    rows = _agreement_rows(*_replicated_rows(experiment=experiment, since=since, of_raters=of_raters))
    return rows if of_raters is None else {rater: row for rater, row in rows.items() if rater in of_raters}


def _agreement_stored(*, experiment: Experiment | None) -> dict[int, dict]:
    stored = RaterAgreement.objects.filter(experiment=experiment).values_list("raters", flat=True).first()
    return {int(rater): row for rater, row in (stored or {}).items()}


def _agreement_rows(task: np.ndarray, rater: np.ndarray, verdict: np.ndarray) -> dict[int, dict]:
    return {
        int(row.rater): {
            "replicated_verdicts": row.replicated_verdicts,
            "mean_kappa": json_number(row.mean_kappa),
            "kappa_raters": row.kappa_raters,
            "majority_verdicts": row.majority_units,
            "majority_share": json_number(row.majority_share),
        }
        for row in rater_agreement(unit=task, verdict=verdict, rater=rater)
    }
