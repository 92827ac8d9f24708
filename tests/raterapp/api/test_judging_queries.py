"""The rating loop's queries are pinned (issue 17): a next-pair and a submit each run this exact
number of statements, whatever the experiment's size, so that a query added to the loop fails here.

Counted as the server runs them, BEGIN and COMMIT included: token authentication, the request's
transaction, and a submit's outbox dispatch after the commit. Without Redis
the caches (API rate, debounce keys) are a table: those statements are not the loop's and not counted."""

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from raterapp.models import ApiToken, Judgement, OutboxMessage
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.api import client_with_token
from tests.raterapp.prepared import experiment_of

pytestmark = pytest.mark.django_db(transaction=True)

# Auth (token, user and roles), the experiment's access check; BEGIN, the rater's lock, the rater's
# state, the next task (locked, with its cards), the lease if its slot is free, COMMIT; progress.
# 18 before issue 17's second round.
NEXT_PAIR_QUERIES = 9
# Auth, the task's access check; BEGIN, both locks, the submit's state, every write of the verdict,
# COMMIT; the outbox's dispatch (BEGIN, delete, COMMIT); progress. 27 before.
SUBMIT_QUERIES = 11
# A submit with `next`: the submit's, then the lease's transaction (BEGIN, lock, state, next task,
# lease, COMMIT) and one progress for both: 11 + 6, against 11 + 9 for the two requests.
SUBMIT_AND_NEXT_QUERIES = 17
ROUNDS = 3


def loop_statements(queries: CaptureQueriesContext) -> int:
    return sum(1 for query in queries.captured_queries if "raterapp_cache" not in query["sql"])


def loop_queries(n_pairs: int, *, with_next: bool = False) -> dict[str, list[int]]:
    experiment = experiment_of(n_pairs, UserFactory(roles=["engineer"]))
    rater = UserFactory(roles=["rater"])
    client = client_with_token(rater)
    ApiToken.objects.filter(user=rater).update(last_used_at=timezone.now())  # stamped once a minute
    counts = {"next-pair": [], "submit": []}
    for _ in range(ROUNDS):
        with CaptureQueriesContext(connection) as queries:
            response = client.post(f"/api/experiments/{experiment.pk}/next-pair/", {}, format="json")
        assert response.status_code == 200, response.content
        counts["next-pair"].append(loop_statements(queries))
        body = {"task": response.json()["pair"]["task"], "verdict": "equivalent", "client_id": str(uuid.uuid4())}
        if with_next:
            body["next"] = {"holding": []}
        with CaptureQueriesContext(connection) as queries:
            response = client.post("/api/judgements/", body, format="json")
        assert response.status_code == 201, response.content
        assert ("next" in response.json()) == with_next
        counts["submit"].append(loop_statements(queries))
    assert Judgement.objects.filter(rater=rater).count() == ROUNDS
    assert not OutboxMessage.objects.exists()  # every refresh was dispatched after its commit
    return counts


def test_next_pair_and_submit_run_a_pinned_number_of_queries_at_10_and_500_pairs():
    small, large = loop_queries(10), loop_queries(500)
    assert small == large
    if connection.vendor == "postgresql":  # SQLite takes the writes one statement each
        assert small == {"next-pair": [NEXT_PAIR_QUERIES] * ROUNDS, "submit": [SUBMIT_QUERIES] * ROUNDS}


def test_a_submit_that_leases_the_next_pair_runs_a_pinned_number_of_queries_at_10_and_500_pairs():
    small, large = loop_queries(10, with_next=True), loop_queries(500, with_next=True)
    assert small["submit"] == large["submit"]
    if connection.vendor == "postgresql":
        assert small["submit"] == [SUBMIT_AND_NEXT_QUERIES] * ROUNDS
        assert SUBMIT_AND_NEXT_QUERIES < SUBMIT_QUERIES + NEXT_PAIR_QUERIES - 2
