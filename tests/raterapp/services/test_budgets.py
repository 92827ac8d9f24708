"""Judgement budgets: spending stops at the limit (leases and verdicts), pools are shared,
undo gives back, lowering keeps every verdict, pause stops leasing; every change through the
API, the Django admin (and the service) is in the audit log, and only admins change budgets."""

import uuid
from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.test import Client
from rest_framework.test import APIClient

from raterapp.models import BudgetChange, BudgetPool, Experiment, ExperimentBudget, Judgement, PairTask
from raterapp.services.experiments.budgets import BudgetSpent, budget_update, pool_create, pool_update
from raterapp.services.judging import QueueClosed, assignment_next, judgement_submit, judgement_undo
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

pytestmark = [pytest.mark.usefixtures("media"), pytest.mark.rating_loop]


@pytest.fixture
def experiment(users):
    experiment = experiment_prepared(owner=users["engineer"], replication=3)
    experiment.gold_rate = 0.0
    experiment.save()
    return experiment


def budget_of(experiment) -> ExperimentBudget:
    return ExperimentBudget.objects.get(experiment=experiment)


def limit(experiment, admin, max_verdicts, **more):
    return budget_update(
        budget=budget_of(experiment),
        actor=admin,
        changes={"max_verdicts": max_verdicts, **more},
        reason="test",
        via="api",
    )


def judge(experiment, rater, verdict="equivalent"):
    task = assignment_next(experiment=experiment, rater=rater)
    return judgement_submit(task=task, rater=rater, verdict=verdict, client_id=uuid.uuid4())[0]


def test_every_experiment_has_an_unlimited_budget_that_counts_verdicts(experiment, users):
    assert budget_of(experiment).max_verdicts is None
    for rater in UserFactory.create_batch(3, roles=["rater"]):
        judge(experiment, rater)
    assert budget_of(experiment).spent == Judgement.objects.count() == 3


def test_leasing_stops_when_the_budget_is_spent_and_held_pairs_count(experiment, users):
    limit(experiment, users["admin"], 2)
    first, second, third = UserFactory.create_batch(3, roles=["rater"])
    judge(experiment, first)
    assert assignment_next(experiment=experiment, rater=second) is not None  # the last unit, promised
    with pytest.raises(QueueClosed) as refused:
        assignment_next(experiment=experiment, rater=third)
    assert refused.value.reason == "budget_spent"


def test_a_verdict_beyond_the_budget_is_refused_and_changes_nothing(experiment, users):
    raters = UserFactory.create_batch(3, roles=["rater"])
    tasks = [assignment_next(experiment=experiment, rater=rater) for rater in raters]  # leased while unlimited
    limit(experiment, users["admin"], 1)
    judgement_submit(task=tasks[0], rater=raters[0], verdict="equivalent", client_id=uuid.uuid4())
    verdicts = PairTask.objects.get(pk=tasks[1].pk).verdicts
    with pytest.raises(BudgetSpent, match="budget is spent"):
        judgement_submit(task=tasks[1], rater=raters[1], verdict="equivalent", client_id=uuid.uuid4())
    assert PairTask.objects.get(pk=tasks[1].pk).verdicts == verdicts
    assert Judgement.objects.count() == budget_of(experiment).spent == 1


def test_lowering_below_spent_keeps_every_verdict_and_raising_resumes(experiment, users):
    raters = UserFactory.create_batch(4, roles=["rater"])
    for rater in raters[:3]:
        judge(experiment, rater)
    limit(experiment, users["admin"], 1)
    assert Judgement.objects.count() == budget_of(experiment).spent == 3
    with pytest.raises(QueueClosed):
        assignment_next(experiment=experiment, rater=raters[3])
    limit(experiment, users["admin"], 4)
    assert assignment_next(experiment=experiment, rater=raters[3]) is not None


def test_pause_stops_leasing_and_resume_restarts_it(experiment, users):
    rater = UserFactory(roles=["rater"])
    budget_update(budget=budget_of(experiment), actor=users["admin"], changes={"paused": True}, reason="r", via="api")
    with pytest.raises(QueueClosed) as refused:
        assignment_next(experiment=experiment, rater=rater)
    assert refused.value.reason == "budget_paused"
    budget_update(budget=budget_of(experiment), actor=users["admin"], changes={"paused": False}, reason="r", via="api")
    assert assignment_next(experiment=experiment, rater=rater) is not None


def test_a_pool_is_shared_by_its_experiments(experiment, users):
    other = experiment_prepared(owner=users["engineer"], replication=3, name="other")
    Experiment.objects.filter(pk=other.pk).update(gold_rate=0.0)
    other.refresh_from_db()
    pool = pool_create(actor=users["admin"], name="Q4 rating", max_verdicts=3, reason="quarter", via="api")
    for e in (experiment, other):
        budget_update(budget=budget_of(e), actor=users["admin"], changes={"pool": pool}, reason="join", via="api")
    raters = UserFactory.create_batch(4, roles=["rater"])
    judge(experiment, raters[0])
    judge(other, raters[1])
    judge(experiment, raters[2])
    with pytest.raises(QueueClosed) as refused:
        assignment_next(experiment=other, rater=raters[3])
    assert refused.value.reason == "budget_spent"
    pool.refresh_from_db()
    assert pool.spent == Judgement.objects.count() == 3
    assert (budget_of(experiment).spent, budget_of(other).spent) == (2, 1)
    pool_update(pool=pool, actor=users["admin"], changes={"paused": True, "max_verdicts": 10}, reason="r", via="api")
    with pytest.raises(QueueClosed) as paused:
        assignment_next(experiment=other, rater=raters[3])
    assert paused.value.reason == "budget_paused"


def test_undo_gives_the_unit_back(experiment, users):
    limit(experiment, users["admin"], 1)
    rater = UserFactory(roles=["rater"])
    judgement = judge(experiment, rater)
    assert budget_of(experiment).spent == 1
    task = judgement_undo(judgement_id=judgement.pk, rater=rater)
    assert budget_of(experiment).spent == 0 == Judgement.objects.count()
    judgement_submit(task=task, rater=rater, verdict="not_equivalent", client_id=uuid.uuid4())
    assert budget_of(experiment).spent == 1 == Judgement.objects.count()


def test_each_change_is_audited_with_who_what_from_to_why(experiment, users):
    pool = pool_create(actor=users["admin"], name="shared", max_verdicts=50, reason="new pool", via="page")
    budget_update(
        budget=budget_of(experiment),
        actor=users["admin"],
        changes={"max_verdicts": 100, "cost_per_verdict": "0.25", "paused": False, "pool": pool},
        reason="pilot done",
        via="api",
    )
    rows = list(
        BudgetChange.objects.filter(budget__experiment=experiment)
        .order_by("field")
        .values_list("field", "old_value", "new_value", "reason", "via", "actor__username")
    )
    assert rows == [
        ("cost_per_verdict", "0.0000", "0.2500", "pilot done", "api", "admin"),
        ("max_verdicts", "", "100", "pilot done", "api", "admin"),
        ("pool", "", f"shared (#{pool.pk})", "pilot done", "api", "admin"),
    ]  # paused did not change: no entry
    assert sorted(BudgetChange.objects.filter(pool=pool).values_list("field", "new_value", "via")) == [
        ("max_verdicts", "50", "page"),
        ("name", "shared", "page"),
    ]
    budget = budget_of(experiment)
    assert (budget.max_verdicts, budget.cost_per_verdict, budget.pool_id) == (100, Decimal("0.25"), pool.pk)


@pytest.mark.parametrize("who", ["engineer", "rater", "nobody"])
def test_only_admins_change_budgets_and_a_refusal_changes_nothing(experiment, users, who):
    with pytest.raises(PermissionDenied):
        budget_update(
            budget=budget_of(experiment), actor=users[who], changes={"max_verdicts": 5}, reason="r", via="api"
        )
    with pytest.raises(PermissionDenied):
        pool_create(actor=users[who], name="p", max_verdicts=5, reason="r", via="api")
    assert budget_of(experiment).max_verdicts is None
    assert not BudgetChange.objects.exists() and not BudgetPool.objects.exists()


def test_bad_values_are_refused(experiment, users):
    admin = users["admin"]
    for changes, field in (
        ({"max_verdicts": -1}, "max_verdicts"),
        ({"cost_per_verdict": "lots"}, "cost_per_verdict"),
        ({"paused": "yes"}, "paused"),
        ({"owner": 1}, "owner"),
    ):
        with pytest.raises(ValidationError) as error:
            budget_update(budget=budget_of(experiment), actor=admin, changes=changes, reason="r", via="api")
        assert field in error.value.message_dict
    assert not BudgetChange.objects.exists()


def test_changes_through_the_api_are_audited(experiment, users):
    client = APIClient()
    client.force_authenticate(users["admin"])
    url = f"/api/experiments/{experiment.pk}/budget/"
    response = client.patch(url, {"max_verdicts": 40, "cost_per_verdict": "1.5", "reason": "more"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["max_verdicts"], body["cost_per_verdict"], body["total_cost"], body["remaining"]) == (
        40,
        "1.5000",
        "60.0000",
        40,
    )
    assert client.patch(url, {"max_verdicts": 10}, format="json").status_code == 400  # no reason: refused
    pool = client.post("/api/budget-pools/", {"name": "P", "max_verdicts": 9, "reason": "r"}, format="json").json()
    assert (
        client.patch(url, {"pool": pool["id"], "reason": "pool it"}, format="json").json()["pool"]["id"] == pool["id"]
    )
    assert client.patch(f"/api/budget-pools/{pool['id']}/", {"paused": True, "reason": "hold"}, format="json").json()[
        "paused"
    ]
    log = client.get(url + "changes/").json()["results"]
    assert [(c["field"], c["new_value"], c["via"]) for c in log] == [
        ("pool", f"P (#{pool['id']})", "api"),
        ("cost_per_verdict", "1.5000", "api"),
        ("max_verdicts", "40", "api"),
    ]
    assert {c["via"] for c in log} == {"api"}
    assert BudgetChange.objects.filter(pool_id=pool["id"], field="paused", new_value="True").exists()

    engineer = APIClient()
    engineer.force_authenticate(users["engineer"])
    assert engineer.get(url).json()["max_verdicts"] == 40  # the owner reads the spend
    assert engineer.patch(url, {"max_verdicts": 1000, "reason": "mine"}, format="json").status_code == 403
    assert budget_of(experiment).max_verdicts == 40


def test_changes_through_the_django_admin_are_audited(experiment, users):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    budget = budget_of(experiment)
    response = client.post(
        f"/admin/raterapp/experimentbudget/{budget.pk}/change/",
        {"max_verdicts": "25", "cost_per_verdict": "0.5", "pool": "", "reason": "set in admin"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    budget.refresh_from_db()
    assert (budget.max_verdicts, budget.paused) == (25, False)
    assert sorted(BudgetChange.objects.values_list("field", "new_value", "via", "reason", "actor__username")) == [
        ("cost_per_verdict", "0.5000", "admin", "set in admin", "root"),
        ("max_verdicts", "25", "admin", "set in admin", "root"),
    ]
    created = client.post("/admin/raterapp/budgetpool/add/", {"name": "Team", "max_verdicts": "7", "reason": "new"})
    assert created.status_code == 302
    assert BudgetChange.objects.filter(pool__name="Team", via="admin").count() == 2


def test_changes_through_the_experiment_page_are_audited(experiment, users):
    page = Client()
    page.force_login(users["admin"])
    url = f"/experiments/{experiment.pk}/budget/"
    form = {
        "max_verdicts": "12",
        "replication": "2",
        "cost_per_verdict": "0.3",
        "paused": "on",
        "reason": "pilot budget",
    }
    response = page.post(url, form)
    assert response.status_code == 302 and response["Location"].endswith(f"/experiments/{experiment.pk}/#budget")
    assert sorted(BudgetChange.objects.values_list("field", "new_value", "via", "reason")) == [
        ("cost_per_verdict", "0.3000", "page", "pilot budget"),
        ("max_verdicts", "12", "page", "pilot budget"),
        ("paused", "True", "page", "pilot budget"),
        ("replication", "2", "page", "pilot budget"),
    ]
    html = page.get(f"/experiments/{experiment.pk}/").content.decode()
    assert 'data-budget="max">12 verdicts<' in html and "Save the budget" in html
    assert "set max_verdicts from “—” to “12” (Page): pilot budget" in html

    refused = page.post(url, {"max_verdicts": "-3", "cost_per_verdict": "0.3", "reason": ""})
    assert refused.status_code == 400
    assert "This field is required." in refused.content.decode()
    assert BudgetChange.objects.count() == 4 and budget_of(experiment).max_verdicts == 12

    engineer = Client()
    engineer.force_login(users["engineer"])  # the owner
    assert engineer.post(url, {**form, "max_verdicts": "1000"}).status_code == 403
    assert budget_of(experiment).max_verdicts == 12 and BudgetChange.objects.count() == 4
    assert "Only admins change budgets." in engineer.get(f"/experiments/{experiment.pk}/").content.decode()


def test_replication_changes_what_every_pair_wants_and_keeps_every_verdict(experiment, users):
    first, second = (judge(experiment, rater) for rater in UserFactory.create_batch(2, roles=["rater"]))
    assert first.task_id == second.task_id  # the first pair in rank order, twice (replication 3)
    judged = PairTask.objects.get(pk=first.task_id)
    budget_update(budget=budget_of(experiment), actor=users["admin"], changes={"replication": 1}, reason="r", via="api")
    experiment.refresh_from_db()
    wanted = dict(PairTask.objects.filter(experiment=experiment).values_list("pk", "wanted"))
    assert experiment.replication == 1
    assert wanted.pop(judged.pk) == judged.verdicts == 2  # keeps its two verdicts
    assert set(wanted.values()) == {1}
    assert Judgement.objects.count() == 2
    budget_update(budget=budget_of(experiment), actor=users["admin"], changes={"replication": 4}, reason="r", via="api")
    assert set(PairTask.objects.filter(experiment=experiment).values_list("wanted", flat=True)) == {4}
    assert list(BudgetChange.objects.order_by("pk").values_list("field", "old_value", "new_value")) == [
        ("replication", "3", "1"),
        ("replication", "1", "4"),
    ]
    with pytest.raises(ValidationError, match="replication"):
        budget_update(
            budget=budget_of(experiment), actor=users["admin"], changes={"replication": 0}, reason="r", via="api"
        )
