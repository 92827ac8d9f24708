"""100 raters race for the last 10 verdicts of a budget, through the API, on the database CI
runs (PostgreSQL): exactly 10 verdicts are accepted, everyone else is told the budget is
spent, and the spent counter equals the verdicts stored. Both doors are raced: asking for a
pair (the lease check) and submitting verdicts on pairs leased before the budget was lowered
(the conditional update)."""

import uuid
from collections import Counter

import pytest
from django.db import connection

from raterapp.models import ExperimentBudget, Judgement, PairTask
from raterapp.selectors.budgets import budget_ledger_mismatches_get
from raterapp.services.experiments.budgets import budget_update
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.concurrency import client_of, post, race
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.rating_loop

BASE = [k // 6 for k in range(600)]
EXP = [(k + 3) // 6 for k in range(600)]


def crowd() -> tuple[int, int]:
    """(raters, verdicts left): 100 and 10 on PostgreSQL (CI); SQLite serialises writers and
    times out under that load, so it gets a smaller race of the same shape."""
    return (100, 10) if connection.vendor == "postgresql" else (8, 3)


def set_limit(experiment, admin, max_verdicts):
    budget = ExperimentBudget.objects.get(experiment=experiment)
    budget_update(budget=budget, actor=admin, changes={"max_verdicts": max_verdicts}, reason="race", via="api")


@pytest.fixture
def experiment(people):
    experiment = experiment_prepared(owner=people["owner"], base=BASE, exp=EXP, n_draws=600, seed=5)
    experiment.gold_rate = 0.0
    experiment.save()
    assert PairTask.objects.filter(experiment=experiment).count() > 110
    return experiment


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("media")
def test_raters_asking_for_pairs_race_for_the_last_verdicts(people, experiment):
    n_raters, left = crowd()
    given = 5
    for rater in UserFactory.create_batch(given, roles=["rater"]):
        client = client_of(rater)
        task = client.post(f"/api/experiments/{experiment.pk}/next-pair/", {}, format="json").json()["pair"]["task"]
        body = {"task": task, "verdict": "equivalent", "client_id": str(uuid.uuid4())}
        assert client.post("/api/judgements/", body, format="json").status_code == 201
    set_limit(experiment, people["admin"], given + left)
    raters = UserFactory.create_batch(n_raters, roles=["rater"])

    def ask_and_answer(rater):
        client = client_of(rater)
        answer = post(client, f"/api/experiments/{experiment.pk}/next-pair/", {}).json()
        if answer["pair"] is None:
            return answer["reason"]
        body = {"task": answer["pair"]["task"], "verdict": "not_equivalent", "client_id": str(uuid.uuid4())}
        return post(client, "/api/judgements/", body).status_code

    outcomes = Counter(race(raters, ask_and_answer))
    assert outcomes == {201: left, "budget_spent": n_raters - left}
    budget = ExperimentBudget.objects.get(experiment=experiment)
    assert budget.spent == Judgement.objects.filter(task__experiment=experiment).count() == given + left
    assert budget_ledger_mismatches_get() == []  # the ledger saw every unit, once


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("media")
def test_verdicts_on_pairs_leased_before_the_budget_was_lowered_race_for_the_last_units(people, experiment):
    n_raters, left = crowd()
    raters = UserFactory.create_batch(n_raters, roles=["rater"])
    tasks = {}
    for rater in raters:  # leased while the budget had no limit
        tasks[rater.pk] = (
            client_of(rater)
            .post(f"/api/experiments/{experiment.pk}/next-pair/", {}, format="json")
            .json()["pair"]["task"]
        )
    assert len(set(tasks.values())) == n_raters
    set_limit(experiment, people["admin"], left)  # the last `left` units, and n_raters pairs held

    def answer(rater):
        body = {"task": tasks[rater.pk], "verdict": "equivalent", "client_id": str(uuid.uuid4())}
        response = post(client_of(rater), "/api/judgements/", body)
        return response.status_code, response.json().get("detail", "").split(":")[
            0
        ] if response.status_code != 201 else ""

    outcomes = Counter(race(raters, answer))
    assert outcomes == {
        (201, ""): left,
        (409, "The experiment's judgement budget is spent"): n_raters - left,
    }, outcomes
    budget = ExperimentBudget.objects.get(experiment=experiment)
    assert budget.spent == Judgement.objects.filter(task__experiment=experiment).count() == left
    assert sum(PairTask.objects.filter(experiment=experiment).values_list("verdicts", flat=True)) == left
    assert budget_ledger_mismatches_get() == []
