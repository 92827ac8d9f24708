"""The admins' overview: verdicts and cost per day per experiment and per rater, throughput and
budgets, with exact counts on hand-placed verdicts; admins only (API and page)."""

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from raterapp.models import BudgetPool, ExperimentBudget, Judgement
from raterapp.services.judging import assignment_next, judgement_submit
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared


@pytest.fixture
def spend(people):
    """Two experiments; verdicts today, yesterday and 20 days ago; one costs 0.5 a verdict."""
    first = experiment_prepared(owner=people["owner"], replication=3, name="first")
    second = experiment_prepared(owner=people["owner"], replication=3, name="second")
    ExperimentBudget.objects.filter(experiment=first).update(cost_per_verdict=Decimal("0.5"), max_verdicts=10)
    pool = BudgetPool.objects.create(name="team", max_verdicts=100, spent=2)
    ExperimentBudget.objects.filter(experiment=second).update(pool=pool)
    alice, bob = UserFactory(username="alice", roles=["rater"]), UserFactory(username="bob", roles=["rater"])
    now = timezone.now()
    placed = [(first, alice, 0), (first, alice, 0), (first, bob, 1), (second, bob, 0), (second, bob, 20)]
    for experiment, rater, days_ago in placed:
        experiment.gold_rate = 0.0
        task = assignment_next(experiment=experiment, rater=rater)
        judgement, _ = judgement_submit(task=task, rater=rater, verdict="equivalent", client_id=uuid.uuid4())
        Judgement.objects.filter(pk=judgement.pk).update(created_at=now - timedelta(days=days_ago))
    return first, second


def test_overview_counts_verdicts_and_cost_per_day(client_of, spend):
    first, second = spend
    body = client_of("admin").get("/api/overview/?days=3").json()
    today = timezone.now().date()
    assert body["days"] == [(today - timedelta(days=k)).isoformat() for k in (2, 1, 0)]
    assert body["verdicts_per_day"] == [
        {"label": "first", "values": [0, 1, 2]},
        {"label": "second", "values": [0, 0, 1]},
    ]
    assert body["cost_per_day"] == [
        {"label": "first", "values": [0, 0.5, 1.0]},
        {"label": "second", "values": [0, 0, 0]},
    ]
    assert body["verdicts_per_rater_per_day"] == [
        {"label": "alice", "values": [0, 0, 2]},
        {"label": "bob", "values": [0, 1, 1]},
    ]
    assert len(body["verdicts_per_hour"]) == 24
    assert sum(row["verdicts"] for row in body["verdicts_per_hour"]) == body["totals"]["last_24h"] == 3
    assert body["totals"] == {"verdicts": 5, "cost": 1.5, "last_24h": 3}
    rows = {row["name"]: row for row in body["experiments"]}
    assert rows["first"] == {
        "experiment": first.pk,
        "name": "first",
        "status": "rating",
        "status_label": "Rating",
        "max_verdicts": 10,
        "spent": 3,
        "remaining": 7,
        "cost_per_verdict": 0.5,
        "spent_cost": 1.5,
        "paused": False,
        "pool": None,
    }
    assert (rows["second"]["remaining"], rows["second"]["pool"]) == (None, "team")
    assert body["pools"][0] == {
        "id": body["pools"][0]["id"],
        "name": "team",
        "max_verdicts": 100,
        "spent": 4,  # 2 before, and the two verdicts of "second"
        "remaining": 96,
        "paused": False,
        "experiments": [second.pk],
    }
    assert client_of("admin").get("/api/overview/?days=0").status_code == 400
    assert client_of("admin").get("/api/overview/?days=x").status_code == 400


@pytest.mark.parametrize(("who", "status"), [("rater", 403), ("owner", 403), ("admin", 200)])
def test_overview_page_is_for_admins(people, spend, who, status):
    client = Client()
    client.force_login(people[who])
    response = client.get("/overview/")
    assert response.status_code == status
    if status == 200:
        html = response.content.decode()
        assert 'data-total="verdicts">5<' in html and "team</strong>: 4 of 100 verdicts spent" in html
        assert 'data-rater="alice"' in html and 'data-rater="bob"' in html
    else:
        assert "This page is for admins" in response.content.decode()
    assert Client().get("/overview/").status_code == 302
