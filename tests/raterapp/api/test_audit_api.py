"""GET /api/audit/: the audit log of people and access for admins, filtered by user and
experiment, newest first."""

import pytest

from raterapp.services.accounts.raters import rater_assign, rater_pause, rater_quota_set


def test_admins_read_the_audit_log_by_user_and_experiment(client_of, people, experiment):
    admin, rater = people["admin"], people["rater"]
    rater_quota_set(actor=admin, rater=rater, daily_quota=4, total_quota=None, reason="trial")
    rater_pause(actor=admin, rater=rater, reason="too fast")
    rater_assign(actor=admin, experiment=experiment, raters=[rater])
    client = client_of("admin")
    rows = client.get("/api/audit/").json()["results"]
    assert [row["action"] for row in rows] == ["rater.assign", "rater.pause", "rater.quota"]
    assert rows[1] | {"id": 0, "created_at": ""} == {
        "id": 0, "created_at": "", "action": "rater.pause", "actor": admin.username, "subject": rater.username,
        "subject_id": rater.pk, "experiment_id": None, "field": "paused", "old_value": "false", "new_value": "true",
        "reason": "too fast",
    }  # fmt: skip
    by_experiment = client.get(f"/api/audit/?experiment={experiment.pk}").json()["results"]
    assert [row["action"] for row in by_experiment] == ["rater.assign"]
    assert client.get(f"/api/audit/?user={people['owner'].pk}").json()["results"] == []
    assert client.get("/api/audit/?user=x").status_code == 400


def test_the_audit_log_filters_by_kind_and_actor(client_of, people, experiment):
    admin, rater = people["admin"], people["rater"]
    rater_quota_set(actor=admin, rater=rater, daily_quota=4, total_quota=None, reason="trial")
    rater_pause(actor=admin, rater=rater, reason="too fast")
    client = client_of("admin")
    rows = client.get("/api/audit/?kind=rater.quota").json()["results"]
    assert [(row["action"], row["reason"]) for row in rows] == [("rater.quota", "trial")]
    assert [row["action"] for row in client.get(f"/api/audit/?actor={admin.pk}").json()["results"]] == [
        "rater.pause",
        "rater.quota",
    ]
    assert client.get(f"/api/audit/?actor={rater.pk}").json()["results"] == []
    assert client.get("/api/audit/?kind=nonsense").status_code == 400


@pytest.mark.parametrize("role", ["anonymous", "rater", "owner", "other"])
def test_only_admins_read_the_audit_log(client_of, role):
    assert client_of(role).get("/api/audit/").status_code == (401 if role == "anonymous" else 403)
