"""Who may rate an experiment, and what it waits for before any rater can be offered a pair.

One answer, read by the admin console (assignments), the API (``raters/``, ``dashboard/`` and the
experiment list) and the pages that show the status badge. The rule itself is the raters' own,
:func:`raterapp.access.open_to_rater` (its assigned raters; none assigned: every rater if it is
open to all raters, else nobody); tests/raterapp/test_rating_access.py holds this module and the
raters' lookups to one answer for every combination.

"Waiting" is a display state derived here, never stored: ``Experiment.status`` stays the
preparation's (``rating``). An experiment in rating waits for raters while no active, unpaused
rater may rate it, and for budget while its budget or its pool is paused or has no verdict left.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q
from django.urls import reverse

from raterapp.access import RATER, open_to_rater
from raterapp.models import Experiment, ExperimentBudget

EVERY_RATER, ASSIGNED, NOBODY = "every_rater", "assigned", "nobody"
WHO_CAN_ACT = "an admin"


def experiments_rating_access_of(*, experiments: Iterable[Experiment]) -> dict[int, dict]:
    """For each experiment (by id): who may rate it (``who``: every_rater, assigned or nobody),
    whether it is open to all raters (``open_to_all``: no one assigned and the setting on, as the
    API says), how many raters are assigned, and how many of those are active and unpaused
    (``available``: of every rater, for one open to every rater). Three queries at most, whatever
    the number of experiments."""
    experiments = list(experiments)
    through = Experiment.assigned_raters.through.objects.filter(experiment__in=[e.pk for e in experiments])
    assigned = Counter(through.values_list("experiment", flat=True))
    usable = Q(user__is_active=True, user__groups__name=RATER) & ~Q(user__rater_profile__paused=True)
    available = Counter(e for e, _ in through.filter(usable).values_list("experiment", "user").distinct())
    every_rater_available = None  # counted once, when an experiment is open to every rater
    answers = {}
    for experiment in experiments:
        n_assigned = assigned.get(experiment.pk, 0)
        if open_to_rater(
            open_to_all=experiment.open_to_all_raters, any_assigned=bool(n_assigned), assigned_to_rater=False
        ):
            who = EVERY_RATER
            if every_rater_available is None:
                every_rater_available = _raters_available_count()
            n_available = every_rater_available
        else:
            who = ASSIGNED if n_assigned else NOBODY
            n_available = available.get(experiment.pk, 0)
        answers[experiment.pk] = {
            "who": who,
            "open_to_all": who == EVERY_RATER,
            "assigned": n_assigned,
            "available": n_available,
            "text": _access_text(who, n_assigned, n_available),
        }
    return answers


def _raters_available_count() -> int:
    """Active, unpaused raters: who may be offered a pair of an experiment open to every rater."""
    raters = get_user_model().objects.filter(is_active=True, groups__name=RATER)
    return raters.exclude(rater_profile__paused=True).distinct().count()


def experiment_rating_access_get(*, experiment: Experiment) -> dict:
    """Who may rate this experiment: see :func:`experiments_rating_access_of`."""
    return experiments_rating_access_of(experiments=[experiment])[experiment.pk]


def experiments_waiting_of(*, experiments: Iterable[Experiment]) -> dict[int, dict | None]:
    """For each experiment in rating (by id), what it waits for before a rater can be offered a
    pair, or None when nothing: ``raters``, ``budget`` (booleans), ``label``, ``reasons``, who can
    act and the console page where they do (``fix_url``), and what the owner asked for."""
    rating = [e for e in experiments if e.status == Experiment.Status.RATING]
    access = experiments_rating_access_of(experiments=rating)
    budgets = {
        row["experiment"]: row
        for row in ExperimentBudget.objects.filter(experiment__in=[e.pk for e in rating]).values(
            "experiment",
            "max_verdicts",
            "spent",
            "paused",
            "pool__name",
            "pool__max_verdicts",
            "pool__spent",
            "pool__paused",
        )
    }
    return {e.pk: _waiting(e, access[e.pk], budgets.get(e.pk)) for e in rating}


def experiment_waiting_get(*, experiment: Experiment) -> dict | None:
    """What this experiment waits for (None: nothing, or it is not in rating)."""
    return experiments_waiting_of(experiments=[experiment]).get(experiment.pk)


def _waiting(experiment: Experiment, access: dict, budget: Mapping[str, Any] | None) -> dict | None:
    reasons = []
    raters = not access["available"]
    if raters:
        reasons.append(access["text"])
    budget_reason = _budget_reason(budget)
    if budget_reason:
        reasons.append(budget_reason)
    if not reasons:
        return None
    wanted = " and ".join(name for name, wants in (("raters", raters), ("budget", bool(budget_reason))) if wants)
    return {
        "raters": raters,
        "budget": bool(budget_reason),
        "label": f"Waiting for {wanted}",
        "reasons": reasons,
        "who": WHO_CAN_ACT,
        "fix_url": reverse("console-assignments") + f"#experiment-{experiment.pk}",
        "fix_label": "Raters and budget in the admin console",
        "requested_verdicts": experiment.requested_verdicts,
        "request": experiment.rating_request,
    }


def _budget_reason(budget: Mapping[str, Any] | None) -> str:
    if budget is None:
        return ""
    if budget["paused"]:
        return "Its budget is paused: no pair is offered until an admin resumes it."
    if budget["pool__name"] is not None and budget["pool__paused"]:
        return f"Its pool {budget['pool__name']} is paused: no pair is offered until an admin resumes it."
    limit = budget["max_verdicts"]
    if limit is not None and budget["spent"] >= limit:
        if limit == 0:
            return "It has no budget yet: its budget allows 0 verdicts."
        return f"Its budget of {limit} verdicts is spent."
    if budget["pool__name"] is not None and budget["pool__spent"] >= budget["pool__max_verdicts"]:
        return f"Its pool {budget['pool__name']} has no verdicts left."
    return ""


def _access_text(who: str, assigned: int, available: int) -> str:
    if who == EVERY_RATER and not available:
        return "It is open to every rater, but no rater is active and unpaused."
    if who == EVERY_RATER:
        return "No rater is assigned and it is open to every rater: every rater may rate it."
    if who == NOBODY:
        return "No rater may rate it: none is assigned and it is not open to every rater."
    raters = "rater" if assigned == 1 else "raters"
    if not available:
        return f"Only its {assigned} assigned {raters} may rate it, and none of them is active and unpaused."
    return f"Only its {assigned} assigned {raters} may rate it ({available} active and unpaused)."
