"""The rater management API: shapes, changes through it, a rater's own view, assignment and
agreement per experiment, and the daily quota across sessions and devices."""

import csv
import io
import threading
import uuid

import pytest
from django.db import connection
from rest_framework.test import APIClient

from raterapp.models import AuditEntry, Judgement, Lease, RaterProfile
from raterapp.selectors.raters import experiment_agreement_get
from raterapp.services.accounts.raters import rater_pause
from tests.raterapp.factories import UserFactory

RATER_FIELDS = {
    "rater", "username", "is_active", "paused", "verdicts", "unsure", "unsure_share", "last_verdict_at",
    "timed_verdicts", "median_seconds", "gold_answered", "gold_unsure", "gold_correct", "gold_accuracy",
    "gold_ci_low", "gold_ci_high", "replicated_verdicts", "mean_kappa", "kappa_raters", "majority_verdicts",
    "majority_share", "too_fast", "low_gold_accuracy", "flags",
}  # fmt: skip
ADMIN_FIELDS = RATER_FIELDS | {"email", "daily_quota", "total_quota", "paused_reason", "paused_at"}


def next_pair(client, experiment, holding=()):
    response = client.post(f"/api/experiments/{experiment.pk}/next-pair/", {"holding": list(holding)}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def submit(client, task_id):
    body = {"task": task_id, "verdict": "equivalent", "client_id": str(uuid.uuid4())}
    return client.post("/api/judgements/", body, format="json")


def judge(client, experiment):
    answer = next_pair(client, experiment)
    assert answer["pair"] is not None, answer["reason"]
    assert submit(client, answer["pair"]["task"]).status_code == 201


def csv_rows(response):
    return list(csv.DictReader(io.StringIO(response.content.decode())))


# ---------------------------------------------------------------- admins


def test_admins_list_raters_with_their_numbers_as_json_and_csv(client_of, people, experiment):
    judge(client_of("rater"), experiment)
    (row,) = client_of("admin").get("/api/raters/").json()
    assert set(row) == ADMIN_FIELDS
    assert (row["rater"], row["username"], row["verdicts"], row["flags"]) == (
        people["rater"].pk,
        people["rater"].username,
        1,
        [],
    )
    response = client_of("admin").get("/api/raters/?format=csv")
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == 'attachment; filename="raters.csv"'
    (line,) = csv_rows(response)
    assert set(line) == ADMIN_FIELDS - {"flags"} and line["verdicts"] == "1" and line["too_fast"] == "False"
    later = client_of("admin").get("/api/raters/?since=2999-01-01").json()
    assert later[0]["verdicts"] == 0
    scoped = client_of("admin").get(f"/api/raters/?experiment={experiment.pk}&since=2000-01-01T00:00:00Z").json()
    assert scoped[0]["verdicts"] == 1
    assert client_of("admin").get("/api/raters/?since=yesterday").status_code == 400
    assert client_of("admin").get("/api/raters/?experiment=99999").status_code == 404


def test_an_admin_creates_a_rater_who_sets_a_password_from_the_link(client_of):
    response = client_of("admin").post("/api/raters/", {"username": "rita", "email": "rita@example.org"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == ADMIN_FIELDS | {"set_password_url"}
    assert (body["username"], body["email"], body["verdicts"], body["paused"]) == ("rita", "rita@example.org", 0, False)
    assert body["set_password_url"].startswith("http://testserver/accounts/set-password/")
    with_password = client_of("admin").post(
        "/api/raters/", {"username": "rob", "email": "rob@example.org", "password": "a-long-pass-phrase"}, format="json"
    )
    assert with_password.status_code == 201 and with_password.json()["set_password_url"] is None
    taken = client_of("admin").post("/api/raters/", {"username": "rita", "email": "r@example.org"}, format="json")
    assert taken.status_code == 400 and "username" in taken.json()


def test_an_admin_reads_and_changes_a_rater(client_of, people, experiment):
    rater = people["rater"]
    url = f"/api/raters/{rater.pk}/"
    experiment.assigned_raters.add(rater)
    body = client_of("admin").get(url).json()
    assert set(body) == ADMIN_FIELDS | {"assigned_experiments"}
    assert body["assigned_experiments"] == [{"id": experiment.pk, "name": experiment.name, "status": "rating"}]
    changed = client_of("admin").patch(
        url, {"daily_quota": 10, "total_quota": None, "quota_reason": "trial", "paused": True, "paused_reason": "Checking"}, format="json"
    )
    assert changed.status_code == 200, changed.content
    body = changed.json()
    assert (body["daily_quota"], body["total_quota"], body["paused"], body["paused_reason"]) == (
        10,
        None,
        True,
        "Checking",
    )
    assert next_pair(client_of("rater"), experiment)["reason"] == "rater_paused"
    body = client_of("admin").patch(url, {"paused": False, "is_active": False}, format="json").json()
    assert (body["paused"], body["paused_reason"], body["is_active"]) == (False, "", False)
    assert client_of("admin").patch(url, {"is_active": True}, format="json").json()["is_active"] is True


def test_a_pause_without_a_reason_is_refused_and_changes_nothing(client_of, people):
    url = f"/api/raters/{people['rater'].pk}/"
    response = client_of("admin").patch(url, {"daily_quota": 3, "paused": True}, format="json")
    assert response.status_code == 400 and "paused_reason" in response.json()
    assert not RaterProfile.objects.filter(user=people["rater"]).exclude(daily_quota=None).exists()
    assert client_of("admin").get("/api/raters/999999/").status_code == 404


def test_a_quota_change_without_a_reason_is_refused_and_changes_nothing(client_of, people):
    url = f"/api/raters/{people['rater'].pk}/"
    response = client_of("admin").patch(url, {"daily_quota": 3, "quota_reason": " "}, format="json")
    assert response.status_code == 400
    assert "quota_reason" in response.json()
    assert not RaterProfile.objects.filter(user=people["rater"]).exclude(daily_quota=None).exists()
    assert not AuditEntry.objects.exists()
    response = client_of("admin").patch(url, {"daily_quota": 3, "quota_reason": "Trial week"}, format="json")
    assert response.status_code == 200
    assert list(AuditEntry.objects.values_list("field", "new_value", "reason")) == [("daily_quota", "3", "Trial week")]


# ---------------------------------------------------------------- a rater's own view


def test_a_rater_sees_their_own_quota_pause_and_progress_only(client_of, people, experiment):
    rater = people["rater"]
    RaterProfile.objects.create(user=rater, daily_quota=5, total_quota=20)
    judge(client_of("rater"), experiment)
    rater_pause(actor=people["admin"], rater=rater, reason="gold accuracy 40%")
    body = client_of("rater").get("/api/raters/me/").json()
    assert set(body) == {"rater", "username", "paused", "paused_at", "today", "total", "quota", "experiments"}
    assert (body["rater"], body["paused"], body["today"], body["total"]) == (rater.pk, True, 1, 1)
    assert body["quota"] == {"daily": 5, "daily_left": 4, "total": 20, "total_left": 19}
    assert [(e["experiment"], e["mine"], e["blocked"]) for e in body["experiments"]] == [
        (experiment.pk, 1, "rater_paused")
    ]
    assert "gold" not in str(body)  # why they were paused stays with the admins
    other = UserFactory(roles=["rater"])
    for rater_id in (rater.pk, other.pk):
        assert client_of("rater").get(f"/api/raters/{rater_id}/").status_code == 403


# ---------------------------------------------------------------- experiments: raters and agreement


def test_engineers_read_an_experiments_raters_and_admins_assign_them(client_of, people, experiment):
    url = f"/api/experiments/{experiment.pk}/raters/"
    judge(client_of("rater"), experiment)
    body = client_of("owner").get(url).json()
    assert (body["experiment"], body["open_to_all"], body["assigned"]) == (experiment.pk, True, [])
    assert [set(row) for row in body["raters"]] == [RATER_FIELDS]  # no e-mail, quotas or pause reason
    chosen = UserFactory(username="chosen", roles=["rater"])
    assert client_of("owner").put(url, {"raters": [chosen.pk]}, format="json").status_code == 403
    body = client_of("admin").put(url, {"raters": [chosen.pk]}, format="json").json()
    assert (body["open_to_all"], body["assigned"]) == (
        False,
        [{"rater": chosen.pk, "username": "chosen", "is_active": True, "paused": False}],
    )
    assert [row["username"] for row in body["raters"]] == ["chosen", people["rater"].username]
    assert client_of("rater").post(f"/api/experiments/{experiment.pk}/next-pair/", {}, format="json").status_code == 404
    assert client_of("admin").put(url, {"raters": [people["owner"].pk]}, format="json").status_code == 400
    lines = csv_rows(client_of("owner").get(url + "?format=csv"))
    assert [line["username"] for line in lines] == ["chosen", people["rater"].username]
    assert client_of("admin").put(url, {"raters": []}, format="json").json()["open_to_all"] is True


def test_the_agreement_of_an_experiment_as_json_and_its_pairwise_table_as_csv(client_of, experiment):
    experiment.tasks.update(wanted=2)
    raters = UserFactory.create_batch(2, roles=["rater"])
    clients = []
    for rater in raters:
        client = APIClient()
        client.force_authenticate(rater)
        clients.append(client)
    for _ in range(3):
        for client in clients:
            judge(client, experiment)
    url = f"/api/experiments/{experiment.pk}/agreement/"
    body = client_of("owner").get(url).json()
    assert body == experiment_agreement_get(experiment=experiment)
    assert body["summary"]["replicated_pairs"] == 3 and body["summary"]["fleiss_kappa"] is None  # all "equivalent"
    assert [(p["rater_a"], p["rater_b"], p["pairs"]) for p in body["pairwise"]] == [(raters[0].pk, raters[1].pk, 3)]
    response = client_of("owner").get(url + "?format=csv")
    assert response["Content-Disposition"] == f'attachment; filename="experiment-{experiment.pk}-agreement.csv"'
    assert csv_rows(response) == [
        {
            "rater_a": str(raters[0].pk), "rater_a_username": raters[0].username,
            "rater_b": str(raters[1].pk), "rater_b_username": raters[1].username, "pairs": "3", "kappa": "",
        }
    ]  # fmt: skip


# ---------------------------------------------------------------- the daily quota across sessions and devices


def signed_in(rater, password="rita-pass-phrase"):
    client = APIClient()
    assert client.login(username=rater.username, password=password)
    return client


def test_the_daily_quota_counts_every_session_of_the_rater(people, experiment):
    rater = people["rater"]
    rater.set_password("rita-pass-phrase")
    rater.save()
    RaterProfile.objects.create(user=rater, daily_quota=3)
    phone, laptop = signed_in(rater), signed_in(rater)
    assert phone.cookies["sessionid"].value != laptop.cookies["sessionid"].value  # two sessions

    judge(phone, experiment)
    judge(laptop, experiment)
    held = next_pair(laptop, experiment)["pair"]["task"]  # the third, on the laptop's screen
    assert next_pair(phone, experiment)["pair"]["task"] == held  # one rater, one lease: the phone shows it too
    assert next_pair(phone, experiment, holding=[held])["reason"] == "quota_daily"  # 2 given + 1 held = 3
    assert submit(phone, held).status_code == 201
    for client in (phone, laptop):
        answer = next_pair(client, experiment)
        assert (answer["pair"], answer["reason"]) == (None, "quota_daily")
        assert answer["progress"]["today"] == 3 and answer["progress"]["quota"]["daily_left"] == 0
        assert client.get("/api/raters/me/").json()["quota"]["daily_left"] == 0
    assert Judgement.objects.filter(rater=rater).count() == 3 and not Lease.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("media")
def test_sessions_racing_for_pairs_at_once_stay_within_the_daily_quota(people, experiment):
    """Four devices of one rater ask and answer as fast as they can (PostgreSQL in CI: the
    rater's row lock serialises their lease requests, so the quota check sees every one)."""
    rater = people["rater"]
    rater.set_password("rita-pass-phrase")
    rater.save()
    RaterProfile.objects.create(user=rater, daily_quota=5)
    experiment.gold_rate = 0.0
    experiment.save()
    devices = [signed_in(rater) for _ in range(4)]
    start = threading.Barrier(len(devices))
    errors = []

    def device(client):
        try:
            start.wait()
            for _ in range(20):
                response = client.post(f"/api/experiments/{experiment.pk}/next-pair/", {}, format="json")
                assert response.status_code == 200, response.content
                answer = response.json()
                if answer["pair"] is None:
                    assert answer["reason"] == "quota_daily"
                    return
                assert submit(client, answer["pair"]["task"]).status_code in (
                    201,
                    409,
                )  # 409: another device answered it
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=device, args=(client,)) for client in devices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert Judgement.objects.filter(rater=rater).count() == 5
