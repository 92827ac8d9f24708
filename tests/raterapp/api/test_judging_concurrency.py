"""Many raters at once through the API, on the database CI runs (PostgreSQL): the queue's
promises hold under real concurrency, with every submit sent twice at the same moment and
retried once more afterwards (a double click and a retry after a network error)."""

import threading
import uuid
from collections import Counter

import pytest
from django.db import connection, connections
from django.db.models import Count, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from rest_framework.test import APIClient

from raterapp.models import Judgement, Lease, PairTask
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.concurrency import post
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.rating_loop

K = 2


def raters_at_once() -> int:
    """50 on PostgreSQL (CI); SQLite, the embedded demo database, serialises writers and
    times out under that load, so it gets a smaller crowd of the same test."""
    return 50 if connection.vendor == "postgresql" else 6


# 72 items in clusters of 6; Exp shifts every cluster boundary by 3: many split and merge pairs.
BASE = [k // 6 for k in range(72)]
EXP = [(k + 3) // 6 for k in range(72)]


def overcommitted_tasks(experiment_id) -> list:
    """Tasks whose verdicts and live leases exceed what they want, read in one statement."""
    live = (
        Lease.objects.filter(task=OuterRef("pk"), expires_at__gt=timezone.now())
        .order_by()
        .values("task")
        .annotate(n=Count("pk"))
        .values("n")
    )
    rows = (
        PairTask.objects.filter(experiment_id=experiment_id, gold_answer="")
        .annotate(live=Coalesce(Subquery(live), Value(0)))
        .values_list("pk", "verdicts", "live", "wanted")
    )
    return [row for row in rows if row[1] + row[2] > row[3]]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("media")
def test_fifty_raters_with_replication_two_and_double_submits(people):
    experiment = experiment_prepared(owner=people["owner"], base=BASE, exp=EXP, n_draws=200, replication=K, seed=3)
    experiment.gold_rate = 0.0
    experiment.save()
    n_tasks = PairTask.objects.filter(experiment=experiment).count()
    assert n_tasks > 60  # more pairs than raters: everyone works through several
    n_raters = raters_at_once()
    raters = UserFactory.create_batch(n_raters, roles=["rater"])
    url = f"/api/experiments/{experiment.pk}/next-pair/"

    start = threading.Barrier(n_raters + 1)
    done = threading.Event()
    errors, leased, answers, overcommitted = [], [], [], []
    lock = threading.Lock()

    def rater_loop(rater):
        client = APIClient()
        client.force_authenticate(rater)
        try:
            start.wait()
            while True:
                response = post(client, url, {})
                assert response.status_code == 200, response.content
                pair = response.json()["pair"]
                if pair is None:
                    return
                with lock:
                    leased.append((rater.pk, pair["task"]))
                client_id = str(uuid.uuid4())
                body = {"task": pair["task"], "verdict": "equivalent", "client_id": client_id}
                statuses = double_submit(rater, body)
                statuses.append(post(client, "/api/judgements/", body).status_code)  # a late retry
                with lock:
                    answers.append((rater.pk, pair["task"], client_id, sorted(statuses)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    def double_submit(rater, body):
        statuses = [None, None]
        both = threading.Barrier(2)

        def send(k):
            client = APIClient()
            client.force_authenticate(rater)
            try:
                both.wait()
                statuses[k] = post(client, "/api/judgements/", body).status_code
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
            finally:
                connection.close()

        twins = [threading.Thread(target=send, args=(k,)) for k in range(2)]
        for t in twins:
            t.start()
        for t in twins:
            t.join()
        return statuses

    def monitor():
        try:
            start.wait()
            while not done.is_set():
                overcommitted.extend(overcommitted_tasks(experiment.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=rater_loop, args=(r,)) for r in raters]
    watcher = threading.Thread(target=monitor)
    for t in [*threads, watcher]:
        t.start()
    for t in threads:
        t.join(timeout=600)
    done.set()
    watcher.join()
    connections.close_all()

    assert errors == []
    assert overcommitted == []  # never more raters on a pair (judged or leased) than it wants
    # Each verdict: one twin created it (201), the other twin and the retry got it back (200).
    assert {tuple(statuses) for _, _, _, statuses in answers} == {(200, 200, 201)}
    stored = list(Judgement.objects.filter(task__experiment=experiment).values_list("rater", "task", "client_id"))
    assert sorted((r, t, str(c)) for r, t, c in stored) == sorted((r, t, c) for r, t, c, _ in answers)  # none lost
    assert len(stored) == len({(r, t) for r, t, _ in stored}) == K * n_tasks  # none twice, every slot filled
    per_task = Counter(t for _, t, _ in stored)
    assert set(per_task.values()) == {K} and len(per_task) == n_tasks
    assert set(PairTask.objects.filter(experiment=experiment).values_list("verdicts", flat=True)) == {K}
    assert len(leased) == len(set(leased)) == K * n_tasks  # no rater was offered a pair twice
    assert not Lease.objects.exists()
    assert len({r for r, _, _, _ in answers}) > n_raters // 2  # the work was really shared
