"""An admin voids a rater's verdicts while other raters answer the same pairs and the rater
answers on, on the database CI runs (PostgreSQL): nothing deadlocks or fails, and afterwards the
budget, the pool, the ledger, the tasks' counts and the progress row equal a recompute."""

import uuid
from datetime import timedelta

import pytest
from django.db.models import Count
from django.utils import timezone

from raterapp.models import BudgetPool, ExperimentBudget, ExperimentProgress, Judgement, PairTask
from raterapp.selectors.budgets import budget_ledger_mismatches_get
from raterapp.services.experiments.budgets import budget_update, pool_create
from raterapp.services.judging.progress import experiment_progress_recount
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.concurrency import client_of, post, race
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.rating_loop


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("media")
def test_a_void_racing_other_raters_verdicts_leaves_every_total_equal_to_a_recompute(people):
    experiment = experiment_prepared(owner=people["owner"], replication=3, n_draws=300)
    experiment.gold_rate = 0.0
    experiment.save()
    experiment_progress_recount(experiment_id=experiment.pk)
    admin = people["admin"]
    pool = pool_create(actor=admin, name="race", max_verdicts=1000, reason="race", via="api")
    budget = ExperimentBudget.objects.get(experiment=experiment)
    budget_update(budget=budget, actor=admin, changes={"pool": pool}, reason="race", via="api")
    burst_rater = people["rater"]
    since = timezone.now() - timedelta(seconds=1)

    def answer_one(client):
        pair = client.post(f"/api/experiments/{experiment.pk}/next-pair/", {}, format="json").json()["pair"]
        body = {"task": pair["task"], "verdict": "not_equivalent", "client_id": str(uuid.uuid4())}
        assert client.post("/api/judgements/", body, format="json").status_code == 201
        return pair["task"]

    burst = [answer_one(client_of(burst_rater)) for _ in range(8)]
    others = UserFactory.create_batch(12, roles=["rater"])
    held = {}
    for rater in others:  # each holds a pair, many of them the burst's (replication 3)
        held[rater.pk] = (
            client_of(rater)
            .post(f"/api/experiments/{experiment.pk}/next-pair/", {}, format="json")
            .json()["pair"]["task"]
        )
    assert set(held.values()) & set(burst)
    until = timezone.now() + timedelta(seconds=1)

    def act(who):
        if who == "admin":
            body = {"rater": burst_rater.pk, "since": since.isoformat(), "until": until.isoformat(), "reason": "race"}
            response = post(client_of(admin), "/api/verdict-voids/", body)
            return response.status_code, len(response.json().get("voided", []))
        if who == "burst":
            response = post(client_of(burst_rater), f"/api/experiments/{experiment.pk}/next-pair/", {})
            return response.status_code, 0
        body = {"task": held[who.pk], "verdict": "equivalent", "client_id": str(uuid.uuid4())}
        return post(client_of(who), "/api/judgements/", body).status_code, 0

    outcomes = race(["admin", "burst", *others], act)
    assert outcomes == [(200, 8), (200, 0)] + [(201, 0)] * len(others), outcomes

    assert not Judgement.objects.filter(rater=burst_rater).exists()
    assert budget_ledger_mismatches_get() == []
    budget.refresh_from_db()
    judged = Judgement.objects.filter(task__experiment=experiment)
    assert budget.spent == BudgetPool.objects.get(pk=pool.pk).spent == judged.count() == len(others)
    counted = dict(judged.values_list("task").annotate(n=Count("pk")).order_by())
    per_task = dict(PairTask.objects.filter(experiment=experiment, verdicts__gt=0).values_list("pk", "verdicts"))
    assert per_task == counted
    stored_left = ExperimentProgress.objects.get(experiment=experiment).verdicts_left
    assert stored_left == experiment_progress_recount(experiment_id=experiment.pk)
