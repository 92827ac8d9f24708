"""A verdict that also leases the next pair (``next`` in the submit): one round trip a verdict for
the judging page, with the same pair, reasons and refusals as a next-pair request after it."""

import uuid

import pytest

from raterapp.models import Judgement, Lease, PairTask
from tests.raterapp.helpers.api import next_pair, next_task, submit

pytestmark = pytest.mark.rating_loop


def submit_next(client, task, holding=(), client_id=None):
    return submit(client, task, client_id=client_id, next={"holding": list(holding)})


def test_a_verdict_with_next_is_stored_and_brings_a_fresh_leased_pair(client_of, experiment, people):
    client = client_of("rater")
    judged = next_task(client, experiment)
    response = submit_next(client, judged)
    assert response.status_code == 201
    body = response.json()
    assert Judgement.objects.filter(task_id=judged, rater=people["rater"]).count() == 1
    following = body["next"]
    assert set(following) == {"pair", "reason"} and following["reason"] is None
    pair = following["pair"]
    assert set(pair) == {"task", "lease_expires_at", "left", "right"}
    assert pair["task"] != judged
    assert list(Lease.objects.filter(rater=people["rater"]).values_list("task_id", flat=True)) == [pair["task"]]
    # the same pair, on the same sides, that a next-pair request would now hand back
    again = next_pair(client, experiment).json()["pair"]
    assert (again["task"], again["left"], again["right"]) == (pair["task"], pair["left"], pair["right"])


def test_next_skips_the_pairs_the_page_holds(client_of, experiment, people):
    client = client_of("rater")
    judged = next_task(client, experiment)
    preloaded = next_task(client, experiment, holding=[judged])
    following = submit_next(client, judged, holding=[preloaded]).json()["next"]["pair"]
    assert following["task"] not in (judged, preloaded)
    assert set(Lease.objects.filter(rater=people["rater"]).values_list("task_id", flat=True)) == {
        preloaded,
        following["task"],
    }


def test_without_next_the_answer_has_no_next_and_leases_nothing(client_of, experiment, people):
    client = client_of("rater")
    response = submit(client, next_task(client, experiment))
    assert response.status_code == 201 and "next" not in response.json()
    assert not Lease.objects.filter(rater=people["rater"]).exists()


def test_the_last_verdict_brings_a_null_pair_with_its_reason(client_of, experiment):
    client = client_of("rater")
    task = next_task(client, experiment)
    for _ in range(PairTask.objects.filter(experiment=experiment).count()):
        response = submit_next(client, task)
        assert response.status_code == 201
        following = response.json()["next"]
        task = following["pair"] and following["pair"]["task"]
    assert following == {"pair": None, "reason": "queue_empty"}
    assert response.json()["progress"]["remaining"] == 0


def test_a_rater_holding_two_pairs_gets_the_verdict_stored_and_a_null_next(client_of, experiment, people):
    client = client_of("rater")
    judged = next_task(client, experiment)
    preloaded = next_task(client, experiment, holding=[judged])
    third = PairTask.objects.filter(experiment=experiment).exclude(pk__in=[judged, preloaded]).first()
    lease = Lease.objects.get(task_id=preloaded)
    Lease.objects.create(task=third, rater=people["rater"], token=uuid.uuid4(), expires_at=lease.expires_at)
    response = submit_next(client, judged, holding=[preloaded, third.pk])
    assert response.status_code == 201
    assert response.json()["next"] is None
    assert Judgement.objects.filter(task_id=judged).count() == 1


def test_a_retried_verdict_with_next_hands_back_the_pair_leased_the_first_time(client_of, experiment):
    client = client_of("rater")
    judged, client_id = next_task(client, experiment), uuid.uuid4()
    first = submit_next(client, judged, client_id=client_id)
    retry = submit_next(client, judged, client_id=client_id)
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json()["id"] == first.json()["id"]
    assert retry.json()["next"]["pair"]["task"] == first.json()["next"]["pair"]["task"]
    assert Judgement.objects.filter(task_id=judged).count() == 1


def test_a_refused_verdict_leases_nothing(client_of, experiment, people):
    client = client_of("rater")
    never_leased = PairTask.objects.filter(experiment=experiment).first()
    response = submit_next(client, never_leased.pk)
    assert response.status_code == 409 and "next" not in response.json()
    assert not Lease.objects.filter(rater=people["rater"]).exists()
