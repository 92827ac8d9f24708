"""Who may rate an experiment, and what it waits for (``raterapp.selectors.rating_access``): one
answer for the console, the API and the raters' own lookups, over every combination of the
assignment, the open-to-all setting, the raters' state, the budget and its pool."""

import itertools

import pytest
from django.http import Http404

from raterapp.access import access_experiment_for_rater
from raterapp.models import BudgetPool, Experiment, ExperimentBudget, RaterProfile
from raterapp.selectors.rating_access import (
    experiment_rating_access_get,
    experiment_waiting_get,
    experiments_waiting_of,
)
from tests.raterapp.factories import ExperimentFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.rating_loop]

RATING = Experiment.Status.RATING
# Assigned raters: none, an active one, a paused one, a deactivated one, and the active with the paused.
ASSIGNED = ["none", "active", "paused", "inactive", "active+paused"]


@pytest.fixture
def raters():
    active, paused, inactive = (UserFactory(roles=["rater"]) for _ in range(3))
    RaterProfile.objects.update_or_create(user=paused, defaults={"paused": True})
    inactive.is_active = False
    inactive.save(update_fields=["is_active"])
    return {"active": active, "paused": paused, "inactive": inactive}


def _experiment(raters, *, open_to_all, assigned, max_verdicts=None, spent=0, pool=None, status=RATING):
    experiment = ExperimentFactory(status=status, open_to_all_raters=open_to_all)
    experiment.assigned_raters.add(*(raters[name] for name in assigned.split("+") if name != "none"))
    ExperimentBudget.objects.filter(experiment=experiment).update(max_verdicts=max_verdicts, spent=spent, pool=pool)
    return experiment


def _may_rate(rater, experiment) -> bool:
    try:
        access_experiment_for_rater(rater, experiment.pk)
    except Http404:
        return False
    return True


@pytest.mark.parametrize(("open_to_all", "assigned"), list(itertools.product([True, False], ASSIGNED)))
def test_who_may_rate_is_what_the_raters_own_lookups_answer(raters, open_to_all, assigned):
    experiment = _experiment(raters, open_to_all=open_to_all, assigned=assigned)
    access = experiment_rating_access_get(experiment=experiment)
    outsider = UserFactory(roles=["rater"])  # assigned to nothing
    if assigned == "none":
        expected = "every_rater" if open_to_all else "nobody"
    else:
        expected = "assigned"
    assert access["who"] == expected
    assert access["open_to_all"] == (expected == "every_rater")
    assert _may_rate(outsider, experiment) == (expected == "every_rater")
    for name in ("active", "paused"):  # deactivated raters sign in no more: no lookup to compare
        assert _may_rate(raters[name], experiment) == (expected == "every_rater" or name in assigned.split("+"))
    assert access["assigned"] == (0 if assigned == "none" else len(assigned.split("+")))
    if expected == "every_rater":  # every active, unpaused rater (the outsider came later): the fixture's active one
        assert access["available"] == 1
    else:
        assert access["available"] == ("active" in assigned.split("+"))


@pytest.mark.parametrize(("open_to_all", "assigned"), list(itertools.product([True, False], ASSIGNED)))
def test_waiting_for_raters_until_an_active_unpaused_rater_may_rate(raters, open_to_all, assigned):
    experiment = _experiment(raters, open_to_all=open_to_all, assigned=assigned)
    waiting = experiment_waiting_get(experiment=experiment)
    can_be_offered = "active" in assigned.split("+") or (assigned == "none" and open_to_all)
    if can_be_offered:
        assert waiting is None
    else:
        assert (waiting["raters"], waiting["budget"], waiting["label"]) == (True, False, "Waiting for raters")
        assert waiting["who"] == "an admin"
        assert waiting["fix_url"] == f"/console/assignments/#experiment-{experiment.pk}"
        assert waiting["reasons"] == [experiment_rating_access_get(experiment=experiment)["text"]]


BUDGETS = {  # (max_verdicts, spent, pool left) -> the reason, or None when verdicts are left
    (None, 0, None): None,
    (None, 5, 0): "Its pool P has no verdicts left.",
    (10, 3, None): None,
    (10, 3, 1): None,
    (10, 3, 0): "Its pool P has no verdicts left.",
    (0, 0, None): "It has no budget yet: its budget allows 0 verdicts.",
    (10, 10, None): "Its budget of 10 verdicts is spent.",
    (10, 12, 5): "Its budget of 10 verdicts is spent.",
}


@pytest.mark.parametrize(("budget", "reason"), BUDGETS.items(), ids=str)
def test_waiting_for_budget_while_the_budget_or_its_pool_has_nothing_left(raters, budget, reason):
    limit, spent, pool_left = budget
    pool = BudgetPool.objects.create(name="P", max_verdicts=20, spent=20 - pool_left) if pool_left is not None else None
    experiment = _experiment(raters, open_to_all=True, assigned="none", max_verdicts=limit, spent=spent, pool=pool)
    waiting = experiment_waiting_get(experiment=experiment)
    if reason is None:
        assert waiting is None
    else:
        assert (waiting["raters"], waiting["budget"], waiting["label"]) == (False, True, "Waiting for budget")
        assert waiting["reasons"] == [reason]


def test_both_with_the_owners_request_and_nothing_outside_rating(raters):
    experiment = _experiment(raters, open_to_all=False, assigned="none", max_verdicts=0)
    Experiment.objects.filter(pk=experiment.pk).update(rating_request="Ana and Bo, please", requested_verdicts=500)
    experiment.refresh_from_db()
    waiting = experiment_waiting_get(experiment=experiment)
    assert waiting == {
        "raters": True,
        "budget": True,
        "label": "Waiting for raters and budget",
        "reasons": [
            "No rater may rate it: none is assigned and it is not open to every rater.",
            "It has no budget yet: its budget allows 0 verdicts.",
        ],
        "who": "an admin",
        "fix_url": f"/console/assignments/#experiment-{experiment.pk}",
        "fix_label": "Raters and budget in the admin console",
        "requested_verdicts": 500,
        "request": "Ana and Bo, please",
    }
    preparing = _experiment(raters, open_to_all=False, assigned="none", max_verdicts=0, status="sampling")
    done = _experiment(raters, open_to_all=False, assigned="none", max_verdicts=0, status="done")
    assert experiments_waiting_of(experiments=[experiment, preparing, done]) == {experiment.pk: waiting}


def test_the_list_reads_in_a_fixed_number_of_queries(raters, django_assert_num_queries):
    experiments = [_experiment(raters, open_to_all=k % 2 == 0, assigned=ASSIGNED[k % 5]) for k in range(7)]
    with django_assert_num_queries(4):  # assignments, available raters, every rater (once), budgets
        experiments_waiting_of(experiments=experiments)


def test_open_to_every_rater_waits_for_raters_while_none_is_active_and_unpaused(raters):
    experiment = _experiment(raters, open_to_all=True, assigned="none")
    assert experiment_waiting_get(experiment=experiment) is None  # the fixture's active rater
    RaterProfile.objects.update_or_create(user=raters["active"], defaults={"paused": True})
    waiting = experiment_waiting_get(experiment=experiment)
    assert (waiting["raters"], waiting["budget"], waiting["label"]) == (True, False, "Waiting for raters")
    assert waiting["reasons"] == ["It is open to every rater, but no rater is active and unpaused."]
    newcomer = UserFactory(roles=["rater"])
    assert experiment_waiting_get(experiment=experiment) is None
    newcomer.is_active = False
    newcomer.save(update_fields=["is_active"])
    assert experiment_waiting_get(experiment=experiment)["raters"] is True
    UserFactory(roles=["engineer"])  # not a rater: still waiting
    assert experiment_waiting_get(experiment=experiment)["raters"] is True


def test_a_paused_budget_or_pool_waits_for_budget(raters):
    pool = BudgetPool.objects.create(name="P", max_verdicts=20)
    experiment = _experiment(raters, open_to_all=True, assigned="none", max_verdicts=10, pool=pool)
    assert experiment_waiting_get(experiment=experiment) is None
    BudgetPool.objects.filter(pk=pool.pk).update(paused=True)
    assert experiment_waiting_get(experiment=experiment)["reasons"] == [
        "Its pool P is paused: no pair is offered until an admin resumes it."
    ]
    ExperimentBudget.objects.filter(experiment=experiment).update(paused=True)
    waiting = experiment_waiting_get(experiment=experiment)
    assert (waiting["raters"], waiting["budget"], waiting["label"]) == (False, True, "Waiting for budget")
    assert waiting["reasons"] == ["Its budget is paused: no pair is offered until an admin resumes it."]
    BudgetPool.objects.filter(pk=pool.pk).update(paused=False)
    ExperimentBudget.objects.filter(experiment=experiment).update(paused=False)
    assert experiment_waiting_get(experiment=experiment) is None
