"""What a new experiment starts with, under the production defaults (the suite's settings open
every experiment with no limit, tests/settings.py): open to assigned raters only, with a
budget of 0; an admin opens it (assigned raters, or every rater) and grants a budget, and
only then is a pair leased. The settings choose otherwise."""

import uuid

import pytest
from rest_framework.test import APIClient

from raterapp.access import experiments_open_to_rater
from raterapp.models import BudgetChange, ExperimentBudget, Judgement
from raterapp.selectors.budgets import budget_get
from raterapp.services.accounts.raters import experiment_raters_set
from raterapp.services.experiments.budgets import budget_update
from raterapp.services.judging import QueueClosed, assignment_next, judgement_submit
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.usefixtures("media")


@pytest.fixture
def safe(settings):
    """The production defaults (raterapp/settings.py, .env.example)."""
    settings.NEW_EXPERIMENT_OPEN_TO = "assigned"
    settings.NEW_EXPERIMENT_BUDGET = 0


def closed_reason(experiment, rater):
    with pytest.raises(QueueClosed) as refused:
        assignment_next(experiment=experiment, rater=rater)
    return refused.value.reason


def test_a_new_experiment_is_open_to_nobody_and_spends_nothing_until_an_admin_acts(safe, users):
    experiment = experiment_prepared(owner=users["engineer"])
    rater, other = users["rater"], UserFactory(roles=["rater"])
    assert not experiment.open_to_all_raters
    assert ExperimentBudget.objects.get(experiment=experiment).max_verdicts == 0
    assert list(experiments_open_to_rater(rater)) == []
    assert closed_reason(experiment, rater) == "not_assigned"

    experiment_raters_set(actor=users["admin"], experiment=experiment, rater_ids=[rater.pk])
    assert list(experiments_open_to_rater(rater)) == [experiment]
    assert list(experiments_open_to_rater(other)) == []
    assert closed_reason(experiment, rater) == "budget_spent"

    budget_update(
        budget=budget_get(experiment=experiment), actor=users["admin"], changes={"max_verdicts": 1}, reason="grant", via="api"
    )
    task = assignment_next(experiment=experiment, rater=rater)
    assert judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())[1]
    assert Judgement.objects.filter(task__experiment=experiment).count() == 1
    assert closed_reason(experiment, other) == "not_assigned"
    assert BudgetChange.objects.filter(budget__experiment=experiment, field="max_verdicts").count() == 1


def test_an_admin_opens_a_new_experiment_to_every_rater_through_the_api(safe, users):
    experiment = experiment_prepared(owner=users["engineer"])
    budget_update(
        budget=budget_get(experiment=experiment), actor=users["admin"], changes={"max_verdicts": None}, reason="r", via="api"
    )
    client = APIClient()
    client.force_authenticate(users["admin"])
    url = f"/api/experiments/{experiment.pk}/raters/"
    assert client.get(url).json()["open_to_all"] is False
    response = client.put(url, {"raters": [], "open_to_all": True}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["open_to_all"] is True
    rater = UserFactory(roles=["rater"])
    assert assignment_next(experiment=experiment, rater=rater) is not None
    # Closed again: the held pair is released at once, and no pair is leased.
    assert client.put(url, {"raters": [], "open_to_all": False}, format="json").json()["open_to_all"] is False
    assert not experiment.tasks.filter(leases__isnull=False).exists()
    assert closed_reason(experiment, rater) == "not_assigned"


def test_the_settings_can_open_new_experiments_to_all_with_a_budget_of_their_choice(settings, users):
    settings.NEW_EXPERIMENT_OPEN_TO, settings.NEW_EXPERIMENT_BUDGET = "all", 25
    experiment = experiment_prepared(owner=users["engineer"])
    assert experiment.open_to_all_raters
    assert ExperimentBudget.objects.get(experiment=experiment).max_verdicts == 25
    assert list(experiments_open_to_rater(users["rater"])) == [experiment]
    settings.NEW_EXPERIMENT_BUDGET = None
    unlimited = experiment_prepared(owner=users["engineer"], name="unlimited")
    assert ExperimentBudget.objects.get(experiment=unlimited).max_verdicts is None


def test_existing_experiments_keep_their_openness_when_the_setting_changes(safe, settings, users):
    settings.NEW_EXPERIMENT_OPEN_TO = "all"
    experiment = experiment_prepared(owner=users["engineer"])
    settings.NEW_EXPERIMENT_OPEN_TO = "assigned"
    experiment.refresh_from_db()
    assert experiment.open_to_all_raters
    assert list(experiments_open_to_rater(users["rater"])) == [experiment]
