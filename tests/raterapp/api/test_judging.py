import json
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.db.models import F
from rest_framework.test import APIClient

from raterapp.models import Experiment, Item, Judgement, Lease, PairTask
from raterapp.selectors.judging import CARD_FIELDS
from tests.raterapp.factories import UserFactory
from tests.raterapp.helpers.api import next_pair, next_task, submit
from tests.raterapp.prepared import experiment_prepared

pytestmark = pytest.mark.rating_loop


def test_next_pair_gives_two_cards_and_nothing_that_tells_their_clusters(client_of, experiment):
    response = next_pair(client_of("rater"), experiment)
    assert response.status_code == 200
    outer = response.json()
    assert set(outer) == {"pair", "reason", "question", "guidelines", "progress"}
    assert (outer["question"], outer["guidelines"], outer["reason"]) == ("Same person?", "Look at the names.", None)
    body = outer["pair"]
    task = PairTask.objects.get(pk=body["task"])
    lease = Lease.objects.get(task=task)
    assert set(body) == {"task", "lease_expires_at", "left", "right"}
    assert body["lease_expires_at"].replace("Z", "+00:00") == lease.expires_at.isoformat()
    assert set(body["left"]) == set(body["right"]) == set(CARD_FIELDS)
    assert {body["left"]["title"], body["right"]["title"]} == {task.item_a.title, task.item_b.title}
    text = json.dumps(body)
    for item in (task.item_a, task.item_b):
        for secret in (item.item_id, item.base_cluster, item.exp_cluster):
            assert f'"{secret}"' not in text
    assert "cluster" not in text


def test_left_and_right_are_random_per_rater(people):
    experiment = experiment_prepared(owner=people["owner"], replication=20)
    first_is_a = set()
    for rater in UserFactory.create_batch(20, roles=["rater"]):
        client = APIClient()
        client.force_authenticate(rater)
        body = next_pair(client, experiment).json()["pair"]
        task = PairTask.objects.get(pk=body["task"])
        first_is_a.add(body["left"]["title"] == task.item_a.title)
    assert first_is_a == {True, False}


def test_asking_again_keeps_the_pair_and_its_sides(client_of, experiment):
    client = client_of("rater")
    first, again = next_pair(client, experiment).json()["pair"], next_pair(client, experiment).json()["pair"]
    assert (again["task"], again["left"], again["right"]) == (first["task"], first["left"], first["right"])
    assert again["lease_expires_at"] >= first["lease_expires_at"]


def test_no_pair_left_is_a_null_pair_with_its_reason(client_of, experiment):
    client = client_of("rater")
    for _ in range(PairTask.objects.filter(experiment=experiment).count()):
        assert submit(client, next_task(client, experiment)).status_code == 201
    response = next_pair(client, experiment)
    assert response.status_code == 200
    assert (response.json()["pair"], response.json()["reason"]) == (None, "queue_empty")
    assert response.json()["progress"]["remaining"] == 0
    assert not Lease.objects.exists()


@pytest.mark.parametrize("status", ["queued", "sampling", "done", "failed"])
def test_experiments_not_open_for_rating_are_404_for_raters(client_of, experiment, status):
    Experiment.objects.filter(pk=experiment.pk).update(status=status)
    assert next_pair(client_of("rater"), experiment).status_code == 404
    assert not Lease.objects.exists()


def test_a_verdict_is_201_and_its_retry_200_with_the_same_judgement(client_of, experiment):
    client = client_of("rater")
    task = next_task(client, experiment)
    client_id = uuid.uuid4()
    first = submit(client, task, client_id=client_id, comment="twins?")
    again = submit(client, task, client_id=client_id, comment="twins?")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json() == again.json()
    assert first.json()["comment"] == "twins?" and first.json()["verdict"] == "equivalent"
    assert Judgement.objects.count() == 1
    assert PairTask.objects.get(pk=task).verdicts == 1


def state():
    return (
        sorted(Judgement.objects.values_list("task", "rater", "verdict")),
        sorted(PairTask.objects.values_list("pk", "verdicts")),
        sorted(Lease.objects.values_list("task", "rater", "expires_at")),
    )


def test_a_second_verdict_on_a_pair_is_409_and_changes_nothing(client_of, experiment):
    client = client_of("rater")
    task = next_task(client, experiment)
    submit(client, task)
    before = state()
    response = submit(client, task)
    assert response.status_code == 409
    assert response.json() == {"detail": "You already judged this pair."}
    assert state() == before


def test_a_verdict_on_a_pair_never_leased_is_409(client_of, experiment):
    task = PairTask.objects.filter(experiment=experiment).order_by("rank").last()
    before = state()
    assert submit(client_of("rater"), task.pk).status_code == 409
    assert state() == before


@pytest.mark.parametrize(
    "change, status, key",
    [
        ({"verdict": "maybe"}, 400, "verdict"),
        ({"client_id": "123"}, 400, "client_id"),
        ({"task": "abc"}, 400, "task"),
        ({"task": 10**9}, 404, None),
    ],
)
def test_bad_verdicts_are_refused_and_change_nothing(client_of, experiment, change, status, key):
    client = client_of("rater")
    task = next_task(client, experiment)
    body = {"task": task, "verdict": "equivalent", "client_id": str(uuid.uuid4()), **change}
    before = state()
    response = client.post("/api/judgements/", body, format="json")
    assert response.status_code == status
    if key:
        assert key in response.json()
    assert state() == before


def test_a_client_id_reused_for_another_pair_is_400(client_of, people):
    experiment = experiment_prepared(owner=people["owner"], replication=1)
    client = client_of("rater")
    client_id = uuid.uuid4()
    submit(client, next_task(client, experiment), client_id=client_id)
    other = next_task(client, experiment)
    before = state()
    response = submit(client, other, client_id=client_id)
    assert response.status_code == 400
    assert response.json() == {"client_id": ["Already used for another judgement."]}
    assert state() == before


def test_a_task_of_an_experiment_closed_for_rating_is_404(client_of, experiment):
    client = client_of("rater")
    task = next_task(client, experiment)
    Experiment.objects.filter(pk=experiment.pk).update(status="done")
    before = state()
    assert submit(client, task).status_code == 404
    assert state() == before


def test_items_of_a_card_are_the_task_items(client_of, experiment):
    body = next_pair(client_of("rater"), experiment).json()["pair"]
    titles = {body["left"]["title"], body["right"]["title"]}
    assert Item.objects.filter(title__in=titles, experiment=experiment).count() == 2


# ---------------------------------------------------------------- the page's loop through the API


def test_preloading_holds_two_pairs_and_a_third_request_is_409(client_of, experiment):
    client = client_of("rater")
    current = next_task(client, experiment)
    preloaded = next_task(client, experiment, holding=[current])
    assert preloaded != current
    response = next_pair(client, experiment, holding=[current, preloaded])
    assert response.status_code == 409 and "hold 2" in response.json()["detail"]
    assert Lease.objects.count() == 2


def test_undo_through_the_api_gives_the_pair_back_on_the_same_sides(client_of, experiment, people):
    client = client_of("rater")
    shown = next_pair(client, experiment).json()["pair"]
    verdict = submit(client, shown["task"], verdict="not_equivalent").json()
    assert verdict["progress"]["mine"] == 1
    undone = client.post(f"/api/judgements/{verdict['id']}/undo/")
    assert undone.status_code == 200
    body = undone.json()
    assert body["pair"]["task"] == shown["task"]
    assert (body["pair"]["left"], body["pair"]["right"]) == (shown["left"], shown["right"])
    assert body["progress"]["mine"] == 0
    assert client.post(f"/api/judgements/{verdict['id']}/undo/").status_code == 404  # it is gone
    assert submit(client, shown["task"], verdict="equivalent").status_code == 201
    assert list(Judgement.objects.values_list("task", "verdict")) == [(shown["task"], "equivalent")]


def test_undo_steps_back_three_verdicts_through_the_api_and_refuses_a_too_old_one(client_of, experiment):
    client = client_of("rater")
    old = submit(client, next_task(client, experiment)).json()["id"]
    Judgement.objects.filter(pk=old).update(created_at=F("created_at") - timedelta(seconds=settings.UNDO_SECONDS + 1))
    ids = [submit(client, next_task(client, experiment)).json()["id"] for _ in range(6)]
    before = state()
    refused = client.post(f"/api/judgements/{old}/undo/")
    assert refused.status_code == 409 and "minutes only" in refused.json()["detail"]
    assert state() == before
    tasks = [Judgement.objects.get(pk=pk).task_id for pk in ids]
    reopened = [client.post(f"/api/judgements/{pk}/undo/").json() for pk in reversed(ids[3:])]
    assert [body["pair"]["task"] for body in reopened] == tasks[:2:-1]
    assert [body["progress"]["mine"] for body in reopened] == [6, 5, 4]
    assert Judgement.objects.count() == 4 and Lease.objects.count() == 3


def test_a_verdict_of_another_rater_cannot_be_undone(client_of, experiment):
    client = client_of("rater")
    verdict = submit(client, next_task(client, experiment)).json()
    intruder = APIClient()
    intruder.force_authenticate(UserFactory(roles=["rater"]))
    before = state()
    assert intruder.post(f"/api/judgements/{verdict['id']}/undo/").status_code == 404
    assert state() == before


def test_a_report_through_the_api_is_201_then_200_and_frees_the_lease(client_of, experiment):
    client = client_of("rater")
    task = next_task(client, experiment)
    first = client.post(f"/api/tasks/{task}/report/", {"reason": "unreadable", "note": "garbled"}, format="json")
    again = client.post(f"/api/tasks/{task}/report/", {"reason": "other"}, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"] and first.json()["reason"] == "unreadable"
    assert not Lease.objects.exists()
    bad = client.post(f"/api/tasks/{task}/report/", {"reason": "dull"}, format="json")
    assert bad.status_code == 400 and "reason" in bad.json()
    assert next_task(client, experiment) != task


def test_renewal_through_the_api_lists_renewed_and_lost(client_of, experiment):
    client = client_of("rater")
    task = next_task(client, experiment)
    response = client.post("/api/leases/renew/", {"tasks": [task, 10**9]}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert [lease["task"] for lease in body["leases"]] == [task] and body["lost"] == [10**9]
    assert body["leases"][0]["lease_expires_at"].replace("Z", "+00:00") == Lease.objects.get().expires_at.isoformat()


def test_progress_counts_the_session_from_sign_in(experiment, people, client):
    rater = people["rater"]
    rater.set_password("pw")
    rater.save()
    api = APIClient()
    api.force_authenticate(rater)
    submit(api, next_task(api, experiment))  # before this session
    assert client.login(username=rater.username, password="pw")
    body = client.post(f"/api/experiments/{experiment.pk}/next-pair/", {}, content_type="application/json").json()
    task = body["pair"]["task"]
    assert body["progress"]["session"] == 0 and body["progress"]["mine"] == 1
    answer = {"task": task, "verdict": "unsure", "client_id": str(uuid.uuid4())}
    assert client.post("/api/judgements/", answer, content_type="application/json").json()["progress"]["session"] == 1
    progress = client.get(f"/api/experiments/{experiment.pk}/progress/").json()
    assert (progress["session"], progress["today"], progress["mine"]) == (1, 2, 2)


def test_a_stored_verdict_answers_201_when_what_follows_it_fails(client_of, experiment, monkeypatch):
    """The database lost after the verdict's commit (a restart, a failover): leasing the next pair
    and reading the progress fail, and the answer says the verdict is stored (it once was a 500,
    which a client takes for a verdict not stored)."""
    from django.db import OperationalError

    from raterapp.api import judging

    client = client_of("rater")
    task = next_task(client, experiment)

    def lost(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(judging, "assignment_next", lost)
    monkeypatch.setattr(judging, "rater_progress_get", lost)
    response = submit(client, task, next={"holding": [task]})
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["next"], body["progress"]) == (None, None)
    assert body["degraded"].startswith("The verdict is stored")
    assert Judgement.objects.filter(pk=body["id"], task_id=task).exists()
    monkeypatch.undo()
    assert "degraded" not in submit(client, next_task(client, experiment)).json()
