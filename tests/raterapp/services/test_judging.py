import threading
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.utils import timezone

from raterapp.models import Judgement, Lease, PairTask
from raterapp.services.judging import JudgementRefused, assignment_next, judgement_submit
from tests.raterapp.factories import make_raters
from tests.raterapp.helpers.judging import state
from tests.raterapp.prepared import experiment_prepared

pytestmark = [pytest.mark.usefixtures("media"), pytest.mark.rating_loop]


def submit(task, rater, verdict="equivalent", client_id=None):
    return judgement_submit(task=task, rater=rater, verdict=verdict, client_id=client_id or uuid.uuid4())


@pytest.fixture
def experiment(users):
    return experiment_prepared(owner=users["engineer"])


def test_the_first_task_in_rank_order_is_leased_for_lease_seconds(experiment, users, clock):
    task = assignment_next(experiment=experiment, rater=users["rater"])
    assert task.rank == 0
    lease = Lease.objects.get()
    assert (lease.task_id, lease.rater_id) == (task.pk, users["rater"].pk)
    assert lease.expires_at == clock.now + timedelta(seconds=settings.LEASE_SECONDS)
    assert task.lease == lease


def test_a_rater_holding_a_live_lease_gets_the_same_task_renewed(experiment, users, clock):
    first = assignment_next(experiment=experiment, rater=users["rater"])
    clock.advance(settings.LEASE_SECONDS - 1)
    again = assignment_next(experiment=experiment, rater=users["rater"])
    assert again.pk == first.pk
    assert Lease.objects.count() == 1
    assert Lease.objects.get().expires_at == clock.now + timedelta(seconds=settings.LEASE_SECONDS)


def test_a_leased_task_is_not_offered_to_others_until_the_lease_expires(experiment, clock):
    r0, r1, r2 = make_raters(3)
    t0 = assignment_next(experiment=experiment, rater=r0)
    assert assignment_next(experiment=experiment, rater=r1).rank == 1
    clock.advance(settings.LEASE_SECONDS - 1)
    assert assignment_next(experiment=experiment, rater=r2).rank == 2
    clock.advance(2)  # r0's lease has expired: t0 is back in the queue, first in rank order
    r3 = make_raters(1)[0]
    assert assignment_next(experiment=experiment, rater=r3).pk == t0.pk


def test_replication_k_leases_a_task_to_k_raters_and_then_moves_on(users):
    experiment = experiment_prepared(owner=users["engineer"], replication=2)
    r0, r1, r2 = make_raters(3)
    assert [assignment_next(experiment=experiment, rater=r).rank for r in (r0, r1, r2)] == [0, 0, 1]


def test_replication_k_gives_every_task_k_different_raters_and_never_one_rater_twice(users):
    k = 3
    experiment = experiment_prepared(owner=users["engineer"], replication=k)
    raters = make_raters(5)
    seen = {r.pk: [] for r in raters}
    active = list(raters)
    while active:  # round robin: take a pair, judge it
        for rater in list(active):
            task = assignment_next(experiment=experiment, rater=rater)
            if task is None:
                active.remove(rater)
                continue
            assert task.pk not in seen[rater.pk]
            seen[rater.pk].append(task.pk)
            submit(task, rater)
    tasks = PairTask.objects.filter(experiment=experiment)
    assert tasks.count() > 3
    for task in tasks:
        raters_of_task = list(Judgement.objects.filter(task=task).values_list("rater", flat=True))
        assert task.verdicts == k
        assert len(raters_of_task) == len(set(raters_of_task)) == k
    assert Lease.objects.count() == 0


def test_a_rater_who_judged_a_task_is_not_offered_it_again(users):
    experiment = experiment_prepared(owner=users["engineer"], replication=2)
    rater = users["rater"]
    task = assignment_next(experiment=experiment, rater=rater)
    submit(task, rater)
    assert assignment_next(experiment=experiment, rater=rater).pk != task.pk


def test_no_task_left_gives_none(users):
    experiment = experiment_prepared(owner=users["engineer"])
    rater = users["rater"]
    n = PairTask.objects.filter(experiment=experiment).count()
    for _ in range(n):
        submit(assignment_next(experiment=experiment, rater=rater), rater)
    assert assignment_next(experiment=experiment, rater=rater) is None
    assert assignment_next(experiment=experiment, rater=make_raters(1)[0]) is None


def test_a_submit_counts_one_verdict_and_drops_the_lease(experiment, users):
    task = assignment_next(experiment=experiment, rater=users["rater"])
    judgement, created = submit(task, users["rater"], verdict="not_equivalent")
    assert created
    assert (judgement.task_id, judgement.rater_id, judgement.verdict) == (task.pk, users["rater"].pk, "not_equivalent")
    task.refresh_from_db()
    assert task.verdicts == 1
    assert not Lease.objects.exists()


def test_submitting_twice_with_one_client_id_is_one_verdict(experiment, users):
    task = assignment_next(experiment=experiment, rater=users["rater"])
    client_id = uuid.uuid4()
    first, created_first = submit(task, users["rater"], client_id=client_id)
    second, created_second = submit(task, users["rater"], verdict="unsure", client_id=str(client_id))
    assert (created_first, created_second) == (True, False)
    assert second.pk == first.pk and second.verdict == "equivalent"
    assert Judgement.objects.count() == 1
    task.refresh_from_db()
    assert task.verdicts == 1


def test_a_client_id_of_another_judgement_is_an_error_and_changes_nothing(experiment, users):
    r0, r1 = make_raters(2)
    t0 = assignment_next(experiment=experiment, rater=r0)
    t1 = assignment_next(experiment=experiment, rater=r1)
    client_id = uuid.uuid4()
    submit(t0, r0, client_id=client_id)
    before = state(experiment)
    with pytest.raises(ValidationError) as error:
        submit(t1, r1, client_id=client_id)
    assert list(error.value.message_dict) == ["client_id"]
    assert state(experiment) == before


@pytest.mark.parametrize(
    "kwargs, key",
    [({"verdict": "maybe"}, "verdict"), ({"client_id": "not-a-uuid"}, "client_id")],
)
def test_invalid_input_is_refused_and_changes_nothing(experiment, users, kwargs, key):
    task = assignment_next(experiment=experiment, rater=users["rater"])
    before = state(experiment)
    with pytest.raises(ValidationError) as error:
        judgement_submit(
            **{"task": task, "rater": users["rater"], "verdict": "equivalent", "client_id": uuid.uuid4(), **kwargs}
        )
    assert list(error.value.message_dict) == [key]
    assert state(experiment) == before


def test_only_raters_submit(experiment, users):
    task = PairTask.objects.filter(experiment=experiment).first()
    Lease.objects.create(task=task, rater=users["engineer"], expires_at=timezone.now() + timedelta(minutes=1))
    before = state(experiment)
    with pytest.raises(PermissionDenied):
        submit(task, users["engineer"])
    assert state(experiment) == before


def test_a_second_verdict_of_one_rater_on_a_task_is_refused(users):
    experiment = experiment_prepared(owner=users["engineer"], replication=2)
    task = assignment_next(experiment=experiment, rater=users["rater"])
    submit(task, users["rater"])
    Lease.objects.create(task=task, rater=users["rater"], expires_at=timezone.now() + timedelta(minutes=1))
    before = state(experiment)
    with pytest.raises(JudgementRefused, match="already judged"):
        submit(task, users["rater"])
    assert state(experiment) == before


def test_a_submit_without_a_lease_is_refused(experiment, users):
    task = PairTask.objects.filter(experiment=experiment).first()
    before = state(experiment)
    with pytest.raises(JudgementRefused, match="not assigned"):
        submit(task, users["rater"])
    assert state(experiment) == before


def test_a_late_submit_is_kept_while_the_task_has_a_free_slot(experiment, users, clock):
    task = assignment_next(experiment=experiment, rater=users["rater"])
    clock.advance(settings.LEASE_SECONDS + 60)
    judgement, created = submit(task, users["rater"])
    assert created
    task.refresh_from_db()
    assert task.verdicts == 1


def test_an_expired_lease_returns_the_pair_to_the_queue_and_the_late_verdict_is_still_kept(experiment, clock):
    late, punctual = make_raters(2)
    task = assignment_next(experiment=experiment, rater=late)
    clock.advance(settings.LEASE_SECONDS + 1)
    assert assignment_next(experiment=experiment, rater=punctual).pk == task.pk  # back in the queue
    judgement, created = submit(task, late, verdict="not_equivalent")
    assert created and judgement.verdict == "not_equivalent"
    task.refresh_from_db()
    assert task.verdicts == task.wanted == 1
    # The punctual rater's lease can no longer be honoured: withdrawn, and their submit refused.
    assert not Lease.objects.filter(task=task).exists()
    before = state(experiment)
    with pytest.raises(JudgementRefused, match="all the verdicts|not assigned"):
        submit(task, punctual)
    assert state(experiment) == before
    assert list(Judgement.objects.filter(task=task).values_list("rater", flat=True)) == [late.pk]


def test_a_late_verdict_with_replication_keeps_the_count_at_k(users, clock):
    experiment = experiment_prepared(owner=users["engineer"], replication=2)
    late, second, third = make_raters(3)
    task = assignment_next(experiment=experiment, rater=late)
    clock.advance(settings.LEASE_SECONDS + 1)
    assert assignment_next(experiment=experiment, rater=second).pk == task.pk
    assert assignment_next(experiment=experiment, rater=third).pk == task.pk
    assert submit(task, late)[1]
    assert Lease.objects.filter(task=task).count() == 1  # the newest lease was withdrawn
    kept = Lease.objects.get(task=task).rater
    assert kept == second
    assert submit(task, second)[1]
    with pytest.raises(JudgementRefused):
        submit(task, third)
    task.refresh_from_db()
    assert task.verdicts == 2
    assert sorted(Judgement.objects.filter(task=task).values_list("rater", flat=True)) == sorted([late.pk, second.pk])


def test_a_submit_on_a_full_task_is_refused(experiment, clock):
    first, second = make_raters(2)
    task = assignment_next(experiment=experiment, rater=first)
    clock.advance(settings.LEASE_SECONDS + 1)
    assignment_next(experiment=experiment, rater=second)
    submit(task, second)
    before = state(experiment)
    with pytest.raises(JudgementRefused, match="all the verdicts"):
        submit(task, first)
    assert state(experiment) == before


def _in_threads(functions):
    """Run the functions at once, each in its own thread and database connection."""
    results, errors = [None] * len(functions), []
    barrier = threading.Barrier(len(functions))

    def run(k):
        try:
            barrier.wait()
            results[k] = functions[k]()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(functions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return results


@pytest.mark.django_db(transaction=True)
def test_concurrent_raters_never_hold_the_same_task_beyond_its_replication(users):
    experiment = experiment_prepared(owner=users["engineer"], replication=2)
    raters = make_raters(8)
    tasks = _in_threads([lambda r=r: assignment_next(experiment=experiment, rater=r) for r in raters])
    per_task = {}
    for task in tasks:
        per_task[task.pk] = per_task.get(task.pk, 0) + 1
    assert max(per_task.values()) <= 2
    assert Lease.objects.count() == 8


@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_of_one_submit_record_one_verdict(users):
    experiment = experiment_prepared(owner=users["engineer"])
    rater = users["rater"]
    task = assignment_next(experiment=experiment, rater=rater)
    client_id = uuid.uuid4()
    results = _in_threads([lambda: submit(task, rater, client_id=client_id) for _ in range(4)])
    assert sorted(created for _, created in results) == [False, False, False, True]
    assert len({judgement.pk for judgement, _ in results}) == 1
    task.refresh_from_db()
    assert task.verdicts == 1
