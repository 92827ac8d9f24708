"""The audit log of people and access: quotas, pauses, assignments, roles and active accounts,
each change written by its service in the change's own transaction (a refused or rolled-back
change leaves no entry), with who, whom, from what to what and why."""

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.test import Client

from raterapp.access import user_roles
from raterapp.models import AuditEntry, Experiment, RaterProfile
from raterapp.services.accounts.raters import (
    experiment_raters_set,
    rater_assign,
    rater_create,
    rater_deactivate,
    rater_pause,
    rater_pause_record,
    rater_quota_set,
    rater_reactivate,
    rater_unassign,
    rater_unpause,
    rater_update,
)
from raterapp.services.accounts.users import user_roles_set
from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def admin(users):
    return users["admin"]


@pytest.fixture
def rater(users):
    return users["rater"]


@pytest.fixture
def experiment(users):
    return experiment_prepared(owner=users["engineer"])


def entries():
    return [
        (e.action, e.actor and e.actor.username, e.subject.username, e.experiment_id, e.field, e.old_value, e.new_value, e.reason)
        for e in AuditEntry.objects.order_by("pk")
    ]


def test_quota_changes_are_audited_field_by_field(admin, rater):
    rater_quota_set(actor=admin, rater=rater, daily_quota=20, total_quota=None, reason="trial")
    rater_quota_set(actor=admin, rater=rater, daily_quota=20, total_quota=500, reason="Q4")  # daily unchanged: no entry
    rater_quota_set(actor=admin, rater=rater, daily_quota=None, total_quota=500, reason=" trusted ")
    assert entries() == [
        ("rater.quota", "admin", "rater", None, "daily_quota", "no limit", "20", "trial"),
        ("rater.quota", "admin", "rater", None, "total_quota", "no limit", "500", "Q4"),
        ("rater.quota", "admin", "rater", None, "daily_quota", "20", "no limit", "trusted"),
    ]


@pytest.mark.parametrize("reason", ["", "   "])
def test_a_quota_change_without_a_reason_is_refused_and_changes_nothing(admin, rater, reason):
    with pytest.raises(ValidationError) as refused:
        rater_quota_set(actor=admin, rater=rater, daily_quota=20, total_quota=None, reason=reason)
    assert refused.value.message_dict == {"quota_reason": ["Say why the quota changes."]}
    assert AuditEntry.objects.count() == 0
    assert not RaterProfile.objects.filter(user=rater).exclude(daily_quota=None).exists()
    # Saving the same quotas again changes nothing, so it needs no reason.
    rater_quota_set(actor=admin, rater=rater, daily_quota=None, total_quota=None, reason="")
    assert AuditEntry.objects.count() == 0


def test_pause_and_unpause_are_audited_with_the_reason(admin, rater):
    rater_pause(actor=admin, rater=rater, reason="answers too fast")
    rater_pause(actor=admin, rater=rater, reason="and ignores the guidelines")
    rater_unpause(actor=admin, rater=rater)
    rater_unpause(actor=admin, rater=rater)  # not paused: nothing changes, nothing is written
    assert entries() == [
        ("rater.pause", "admin", "rater", None, "paused", "false", "true", "answers too fast"),
        ("rater.pause", "admin", "rater", None, "paused", "true", "true", "and ignores the guidelines"),
        ("rater.unpause", "admin", "rater", None, "paused", "true", "false", "Paused for: and ignores the guidelines"),
    ]


def test_the_automatic_pause_is_audited_without_an_actor(rater):
    """raters_auto_pause pauses through rater_pause_record, with no actor."""
    rater_pause_record(rater_id=rater.pk, reason="Paused automatically. too_fast")
    assert entries() == [("rater.pause", None, "rater", None, "paused", "false", "true", "Paused automatically. too_fast")]


def test_assignment_changes_are_audited_per_rater_and_experiment(admin, rater, experiment):
    other = UserFactory(username="rita", roles=["rater"])
    rater_assign(actor=admin, experiment=experiment, raters=[rater, other])
    rater_unassign(actor=admin, experiment=experiment, raters=[other])
    experiment_raters_set(actor=admin, experiment=experiment, rater_ids=[other.pk])
    e = experiment.pk
    assert entries() == [
        ("rater.assign", "admin", "rater", e, "assigned", "false", "true", ""),
        ("rater.assign", "admin", "rita", e, "assigned", "false", "true", ""),
        ("rater.unassign", "admin", "rita", e, "assigned", "true", "false", ""),
        ("rater.unassign", "admin", "rater", e, "assigned", "true", "false", ""),
        ("rater.assign", "admin", "rita", e, "assigned", "false", "true", ""),
    ]
    before = entries()
    experiment_raters_set(actor=admin, experiment=experiment, rater_ids=[other.pk])  # no change
    assert entries() == before


def test_creation_deactivation_and_reactivation_are_audited(admin):
    user, _ = rater_create(actor=admin, username="newbie", email="n@example.org")
    rater_deactivate(actor=admin, rater=user)
    rater_deactivate(actor=admin, rater=user)  # already inactive: nothing written
    rater_reactivate(actor=admin, rater=user)
    assert entries() == [
        ("user.roles", "admin", "newbie", None, "roles", "", "rater", ""),
        ("user.active", "admin", "newbie", None, "is_active", "true", "false", ""),
        ("user.active", "admin", "newbie", None, "is_active", "false", "true", ""),
    ]


def test_role_changes_are_audited(admin, users):
    user = users["nobody"]
    assert user_roles_set(actor=admin, user=user, roles=["engineer", "rater"], reason="joins the team") == ["engineer", "rater"]
    assert user_roles(User.objects.get(pk=user.pk)) == {"engineer", "rater"}
    assert RaterProfile.objects.filter(user=user).exists()
    user_roles_set(actor=admin, user=user, roles=["engineer"])
    user_roles_set(actor=admin, user=user, roles=["engineer"])  # no change
    assert entries() == [
        ("user.roles", "admin", "nobody", None, "roles", "", "engineer,rater", "joins the team"),
        ("user.roles", "admin", "nobody", None, "roles", "engineer,rater", "engineer", ""),
    ]


@pytest.mark.parametrize(
    "actor, subject, roles, refusal",
    [
        ("engineer", "nobody", ["admin"], PermissionDenied),
        ("rater", "nobody", ["rater"], PermissionDenied),
        ("admin", "nobody", ["superuser"], ValidationError),
        ("admin", "admin", ["engineer"], ValidationError),  # an admin keeps their own admin role
    ],
)
def test_refused_role_changes_change_nothing_and_write_nothing(users, actor, subject, roles, refusal):
    before = sorted(User.groups.through.objects.values_list("user", "group"))
    with pytest.raises(refusal):
        user_roles_set(actor=users[actor], user=users[subject], roles=roles)
    assert sorted(User.groups.through.objects.values_list("user", "group")) == before
    assert AuditEntry.objects.count() == 0


def test_a_refused_update_rolls_back_its_audit_entries_with_it(admin, rater):
    """rater_update applies all or nothing: the quota's entry goes with the refused pause."""
    with pytest.raises(ValidationError):
        rater_update(actor=admin, rater=rater, changes={"daily_quota": 5, "paused": True, "paused_reason": ""})
    assert AuditEntry.objects.count() == 0
    assert RaterProfile.objects.filter(user=rater, daily_quota=5).count() == 0


def test_an_entry_commits_only_with_its_change(admin, rater):
    with pytest.raises(RuntimeError), transaction.atomic():
        rater_pause(actor=admin, rater=rater, reason="rolled back")
        raise RuntimeError("the surrounding transaction fails")
    assert AuditEntry.objects.count() == 0
    assert not RaterProfile.objects.filter(user=rater, paused=True).exists()


def test_refused_rater_changes_write_nothing(users, rater, experiment):
    for call in (
        lambda: rater_quota_set(actor=users["engineer"], rater=rater, daily_quota=1, total_quota=None, reason="r"),
        lambda: rater_pause(actor=users["engineer"], rater=rater, reason="no"),
        lambda: rater_assign(actor=users["engineer"], experiment=experiment, raters=[rater]),
        lambda: rater_quota_set(actor=users["admin"], rater=rater, daily_quota=-1, total_quota=None, reason="r"),
    ):
        with pytest.raises((PermissionDenied, ValidationError)):
            call()
    assert AuditEntry.objects.count() == 0


def test_the_api_and_the_django_admin_write_the_same_entries(admin, rater, experiment):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(admin)
    body = {"daily_quota": 3, "quota_reason": "trial", "paused": True, "paused_reason": "check"}
    response = client.patch(f"/api/raters/{rater.pk}/", body, format="json")
    assert response.status_code == 200
    response = client.put(f"/api/experiments/{experiment.pk}/raters/", {"raters": [rater.pk]}, format="json")
    assert response.status_code == 200
    root = User.objects.create_superuser("root", password="pw-root")
    browser = Client()
    browser.force_login(root)
    url = f"/admin/auth/user/{rater.pk}/change/"
    form = browser.get(url).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if name in form.fields and value is not None}
    engineer_group = users_group("engineer")
    data.update({"groups": [engineer_group.pk], "user_permissions": [], "date_joined_0": "2026-01-01",
                 "date_joined_1": "00:00:00", "last_login_0": "", "last_login_1": ""})
    response = browser.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
    assert user_roles(User.objects.get(pk=rater.pk)) == {"engineer"}
    assert [(action, actor, field, old, new) for action, actor, _, _, field, old, new, _ in entries()] == [
        ("rater.quota", "admin", "daily_quota", "no limit", "3"),
        ("rater.pause", "admin", "paused", "false", "true"),
        ("rater.assign", "admin", "assigned", "false", "true"),
        ("user.roles", "root", "roles", "rater", "engineer"),
    ]
    assert Experiment.objects.get(pk=experiment.pk).assigned_raters.count() == 1


def users_group(name):
    from django.contrib.auth.models import Group

    return Group.objects.get(name=name)
