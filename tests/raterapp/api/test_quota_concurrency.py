"""A daily quota of 2 holds at submit, through the API, on the database CI runs (PostgreSQL):
against late verdicts on leases that expired while the pairs went to other raters, and
against 20 sessions of the rater at once. The refused verdicts get a 409 that says why, and
nothing of them is stored; a refused late verdict withdraws no other rater's lease."""

import threading
import uuid
from collections import Counter

import pytest
from django.db import connection, connections
from django.utils import timezone
from rest_framework.test import APIClient

from raterapp.models import Judgement, Lease, PairTask, RaterProfile
from raterapp.selectors.budgets import budget_ledger_mismatches_get
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.concurrency import post
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.rating_loop

BASE = [k // 6 for k in range(120)]
EXP = [(k + 3) // 6 for k in range(120)]
QUOTA = 2


def crowd() -> tuple[int, int]:
    """(sessions, rounds of two expired leases): 20 and 5 on PostgreSQL (CI); SQLite serialises
    writers and times out under that load, so it gets a smaller race of the same shape."""
    return (20, 5) if connection.vendor == "postgresql" else (6, 2)


REFUSED = "You reached your daily quota of verdicts: this verdict was not recorded."
# Sessions asking at once are handed the same held pair: one answer counts, the others are told.
ANSWERED = {"You already judged this pair.", "This pair is not assigned to you."}


@pytest.fixture
def experiment(people):
    experiment = experiment_prepared(owner=people["owner"], base=BASE, exp=EXP, n_draws=400, seed=11)
    experiment.gold_rate = 0.0
    experiment.save()
    assert PairTask.objects.filter(experiment=experiment).count() > 40
    return experiment


@pytest.fixture
def limited():
    rater = UserFactory(roles=["rater"])
    rater.set_password("pw-limited")
    rater.save()
    RaterProfile.objects.create(user=rater, daily_quota=QUOTA)
    return rater


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def sessions_of(rater, n) -> list[APIClient]:
    """``n`` signed-in sessions of the rater, as from ``n`` browsers."""
    clients = [APIClient() for _ in range(n)]
    for client in clients:
        assert client.login(username=rater.username, password="pw-limited")
    return clients


def next_pair(client, experiment, holding=()):
    return client.post(f"/api/experiments/{experiment.pk}/next-pair/", {"holding": list(holding)}, format="json")


def expired_leases_passed_on(rater, experiment, rounds) -> dict[int, object]:
    """The rater leases two pairs a round and lets the leases expire; each time another
    rater then leases each pair (a live lease). ``{task: the other rater}``."""
    passed_on = {}
    client = client_of(rater)
    for _ in range(rounds):
        first = next_pair(client, experiment).json()["pair"]["task"]
        second = next_pair(client, experiment, holding=[first]).json()["pair"]["task"]
        Lease.objects.filter(rater=rater).update(expires_at=timezone.now() - timezone.timedelta(seconds=1))
        for task in (first, second):
            other = UserFactory(roles=["rater"])
            assert next_pair(client_of(other), experiment).json()["pair"]["task"] == task
            passed_on[task] = other
    return passed_on


def race(functions):
    """Run the functions at the same moment, each in its own thread and connection."""
    start = threading.Barrier(len(functions))
    results, errors = [None] * len(functions), []

    def run(k):
        try:
            start.wait()
            results[k] = functions[k]()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(functions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    connections.close_all()
    assert errors == []
    return results


def submit(client, task):
    body = {"task": task, "verdict": "equivalent", "client_id": str(uuid.uuid4())}
    response = post(client, "/api/judgements/", body)
    return response.status_code, response.json().get("detail", ""), body["client_id"]


def ask_and_answer(client, experiment_id):
    answer = post(client, f"/api/experiments/{experiment_id}/next-pair/", {"holding": []})
    assert answer.status_code == 200, answer.content
    pair = answer.json()["pair"]
    if pair is None:
        return answer.json()["reason"], "", ""
    return submit(client, pair["task"])


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("media")
def test_late_verdicts_one_after_the_other_stop_at_the_quota(experiment, limited):
    passed_on = expired_leases_passed_on(limited, experiment, rounds=5)
    assert len(passed_on) == 10 and Lease.objects.filter(rater=limited).count() == 10
    client = sessions_of(limited, 1)[0]
    outcomes = [submit(client, task) for task in passed_on]
    assert [status for status, _, _ in outcomes] == [201, 201] + [409] * 8
    assert {detail for status, detail, _ in outcomes if status == 409} == {REFUSED}
    refused_ids = [client_id for status, _, client_id in outcomes if status == 409]
    assert not Judgement.objects.filter(client_id__in=refused_ids).exists()
    assert Judgement.objects.filter(rater=limited).count() == QUOTA
    # Replication 1: the two verdicts kept took their pairs' slots, so exactly those two
    # pairs' other raters lost their leases; the eight refused took nothing from anyone.
    judged = set(Judgement.objects.filter(rater=limited).values_list("task", flat=True))
    live = dict(
        Lease.objects.filter(task__in=list(passed_on), expires_at__gt=timezone.now()).values_list("task", "rater")
    )
    assert live == {task: other.pk for task, other in passed_on.items() if task not in judged}
    assert sum(PairTask.objects.filter(pk__in=list(passed_on)).values_list("verdicts", flat=True)) == QUOTA


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("media")
def test_twenty_sessions_with_late_verdicts_and_new_pairs_at_once_stay_within_the_quota(experiment, limited):
    n_sessions, rounds = crowd()
    passed_on = expired_leases_passed_on(limited, experiment, rounds=rounds)
    tasks = list(passed_on)
    late = len(tasks)
    sessions = sessions_of(limited, n_sessions)
    # Half the sessions send a late verdict each; the other half ask for a pair and answer it.
    work = [lambda c=c, t=t: submit(c, t) for c, t in zip(sessions[:late], tasks, strict=True)]
    work += [lambda c=c: ask_and_answer(c, experiment.pk) for c in sessions[late:]]
    outcomes = race(work)

    statuses = Counter(status for status, _, _ in outcomes)
    assert statuses[201] == QUOTA, outcomes
    assert set(statuses) <= {201, 409, "quota_daily"}, outcomes
    assert {detail for status, detail, _ in outcomes if status == 409} <= {REFUSED, *ANSWERED}
    assert sum(status == 409 and detail == REFUSED for status, detail, _ in outcomes[:late]) >= late - QUOTA
    stored = Judgement.objects.filter(rater=limited)
    assert stored.count() == QUOTA
    assert sorted(str(c) for c in stored.values_list("client_id", flat=True)) == sorted(
        client_id for status, _, client_id in outcomes if status == 201
    )
    # Every other rater whose pair took no verdict of the limited rater still holds it.
    judged = set(stored.values_list("task", flat=True))
    live = dict(Lease.objects.filter(task__in=tasks, expires_at__gt=timezone.now()).values_list("task", "rater"))
    assert live == {task: other.pk for task, other in passed_on.items() if task not in judged}
    for task, other in passed_on.items():
        if task not in judged:
            assert submit(client_of(other), task)[0] == 201
    assert budget_ledger_mismatches_get() == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("media")
def test_twenty_sessions_asking_and_answering_at_once_give_the_quota_and_no_more(experiment, limited):
    sessions = sessions_of(limited, crowd()[0])
    for _ in range(3):  # each session keeps asking: the quota is spent by the end
        outcomes = race([lambda c=c: ask_and_answer(c, experiment.pk) for c in sessions])
        assert set(Counter(status for status, _, _ in outcomes)) <= {201, 409, "quota_daily"}, outcomes
        assert {detail for status, detail, _ in outcomes if status == 409} <= {REFUSED, *ANSWERED}
    assert Judgement.objects.filter(rater=limited).count() == QUOTA
    assert ask_and_answer(sessions[0], experiment.pk)[0] == "quota_daily"
