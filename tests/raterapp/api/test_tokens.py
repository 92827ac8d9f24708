"""Hashed, expiring API tokens: made by their user (the key shown once), refused once expired,
revoked or their user deactivated, revoked by their owner or an admin; former plain tokens
migrated so that scripts keep working until they expire."""

import hashlib
import importlib
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from raterapp.models import ApiToken, AuditEntry
from raterapp.services.accounts.api_tokens import api_token_create
from tests.raterapp.factories import UserFactory


def token_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_new_token_is_shown_once_and_only_its_hash_is_stored(client_of, people, settings):
    settings.API_TOKEN_TTL_DAYS = 30
    before = timezone.now()
    response = client_of("owner").post("/api/tokens/", {"name": "nightly export"}, format="json")
    assert response.status_code == 201
    body = response.json()
    key = body["key"]
    assert key.startswith("rt_") and len(key) == 46
    assert body["prefix"] == key[:9] and body["status"] == "active" and body["name"] == "nightly export"
    token = ApiToken.objects.get(pk=body["id"])
    assert token.key_hash == hashlib.sha256(key.encode()).hexdigest()
    stored = [str(value) for value in ApiToken.objects.filter(pk=token.pk).values().first().values()]
    assert all(key not in value for value in stored)
    assert timedelta(days=30) <= token.expires_at - before <= timedelta(days=30, seconds=5)
    listed = client_of("owner").get("/api/tokens/").json()
    assert [row["id"] for row in listed] == [token.pk] and "key" not in listed[0]
    entry = AuditEntry.objects.get(action="token.create")
    assert (entry.actor, entry.subject, entry.reason) == (people["owner"], people["owner"], "nightly export")


def test_a_token_authenticates_and_records_its_last_use(people):
    token, key = api_token_create(actor=people["owner"])
    assert token.last_used_at is None
    response = token_client(key).get("/api/experiments/")
    assert response.status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None and timezone.now() - token.last_used_at < timedelta(seconds=5)


def test_an_expired_token_is_refused(people):
    token, key = api_token_create(actor=people["owner"], ttl_days=1)
    assert token_client(key).get("/api/experiments/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = token_client(key).get("/api/experiments/")
    # 401 with the token scheme's challenge: the caller should come back with another token.
    assert (response.status_code, response["WWW-Authenticate"]) == (401, "Token")
    assert response.json() == {"detail": "Token expired: make a new one."}
    assert client_status(people, "owner", f"/api/tokens/{token.pk}/") == "expired"


def client_status(people, role, url):
    client = APIClient()
    client.force_authenticate(people[role])
    return client.get("/api/tokens/").json()[0]["status"]


@pytest.mark.parametrize("key", ["rt_unknown", "", "a" * 40])
def test_an_unknown_key_is_refused(db, key):
    response = token_client(key).get("/api/experiments/")
    assert (response.status_code, response["WWW-Authenticate"]) == (401, "Token")
    assert response.json()["detail"] in ("Invalid or revoked token.", "Invalid token header. No credentials provided.")


def test_the_owner_revokes_their_token_and_it_stops_working(client_of, people):
    token, key = api_token_create(actor=people["owner"])
    response = client_of("owner").delete(f"/api/tokens/{token.pk}/")
    assert response.status_code == 200 and response.json()["status"] == "revoked"
    assert token_client(key).get("/api/experiments/").json() == {"detail": "Invalid or revoked token."}
    token.refresh_from_db()
    assert token.revoked_by == people["owner"]
    assert client_of("owner").delete(f"/api/tokens/{token.pk}/").status_code == 200  # twice is fine
    assert AuditEntry.objects.filter(action="token.revoke").count() == 1


def test_another_users_token_is_404_and_stays_live(client_of, people):
    token, key = api_token_create(actor=people["owner"])
    for role in ("other", "rater"):
        assert client_of(role).delete(f"/api/tokens/{token.pk}/").status_code == 404
    assert client_of("other").get("/api/tokens/").json() == []
    assert token_client(key).get("/api/experiments/").status_code == 200


def test_an_admin_lists_and_revokes_any_users_tokens(client_of, people):
    first, first_key = api_token_create(actor=people["rater"], name="one")
    second, second_key = api_token_create(actor=people["rater"], name="two")
    url = f"/api/users/{people['rater'].pk}/tokens/"
    assert [row["name"] for row in client_of("admin").get(url).json()] == ["two", "one"]
    assert client_of("admin").delete(f"/api/tokens/{first.pk}/").status_code == 200
    assert client_of("admin").delete(url).json() == {"revoked": 1}
    for key in (first_key, second_key):
        assert token_client(key).get("/api/raters/me/").status_code == 401
    entries = AuditEntry.objects.filter(action="token.revoke", subject=people["rater"])
    assert [(e.actor, e.old_value) for e in entries] == [(people["admin"], f"{t.prefix}…") for t in (second, first)]


@pytest.mark.parametrize("role", ["anonymous", "rater", "owner"])
def test_only_admins_read_or_revoke_another_users_tokens(client_of, people, role):
    token, key = api_token_create(actor=people["other"])
    url = f"/api/users/{people['other'].pk}/tokens/"
    refused = 401 if role == "anonymous" else 403
    assert client_of(role).get(url).status_code == refused
    assert client_of(role).delete(url).status_code == refused
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None


def test_a_token_cannot_make_tokens(people):
    _, key = api_token_create(actor=people["owner"])
    response = token_client(key).post("/api/tokens/", {"name": "forever"}, format="json")
    assert response.status_code == 403
    assert ApiToken.objects.count() == 1


def test_anonymous_callers_cannot_list_or_make_tokens(client_of):
    assert client_of("anonymous").get("/api/tokens/").status_code == 401
    assert client_of("anonymous").post("/api/tokens/", {}, format="json").status_code == 401
    assert ApiToken.objects.count() == 0


@pytest.mark.parametrize("ttl_days", [0, -1, 367, "x"])
def test_a_lifetime_out_of_range_is_400(client_of, ttl_days):
    response = client_of("owner").post("/api/tokens/", {"ttl_days": ttl_days}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["ttl_days"]
    assert ApiToken.objects.count() == 0


def test_a_deactivated_users_token_is_refused(people):
    _, key = api_token_create(actor=people["rater"])
    people["rater"].is_active = False
    people["rater"].save()
    response = token_client(key).get("/api/raters/me/")
    assert (response.status_code, response.json()) == (401, {"detail": "User inactive or deleted."})


def test_deactivating_a_rater_revokes_their_tokens_for_good(people):
    """Reactivation once revived every old token (README: deactivation stops them)."""
    _, key = api_token_create(actor=people["rater"])
    admin = token_client(api_token_create(actor=people["admin"])[1])
    rater = f"/api/raters/{people['rater'].pk}/"
    assert admin.patch(rater, {"is_active": False}, format="json").status_code == 200
    assert admin.patch(rater, {"is_active": True}, format="json").status_code == 200
    assert token_client(key).get("/api/raters/me/").json() == {"detail": "Invalid or revoked token."}
    assert ApiToken.objects.get(user=people["rater"]).revoked_by == people["admin"]


def test_deactivating_a_user_in_the_django_admin_revokes_their_tokens(people, client):
    engineer = people["owner"]
    _, key = api_token_create(actor=engineer)
    superuser = people["admin"]  # the Django admin edits accounts for superusers only
    superuser.is_superuser = superuser.is_staff = True
    superuser.save()
    client.force_login(superuser)
    form = {  # the change form as the admin leaves it, with "Active" unticked
        "username": engineer.username,
        "first_name": "",
        "last_name": "",
        "email": "",
        "groups": [group.pk for group in engineer.groups.all()],
        "date_joined_0": engineer.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": "00:00:00",
        "initial-date_joined_0": engineer.date_joined.strftime("%Y-%m-%d"),
        "initial-date_joined_1": "00:00:00",
    }
    response = client.post(f"/admin/auth/user/{engineer.pk}/change/", form)
    assert response.status_code == 302, response.content[:2000]
    engineer.refresh_from_db()
    assert not engineer.is_active
    engineer.is_active = True
    engineer.save()
    assert token_client(key).get("/api/experiments/").json() == {"detail": "Invalid or revoked token."}


def test_former_plain_tokens_are_hashed_and_work_until_they_expire(transactional_db, settings):
    """Migration 0010 on a database that has DRF's authtoken table."""
    settings.API_TOKEN_TTL_DAYS = 7
    user = UserFactory(roles=["engineer"])
    plain = "0123456789abcdef0123456789abcdef01234567"
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamp, user_id integer)")
        try:
            cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s, %s)", [plain, timezone.now(), user.pk])
            migration = importlib.import_module("raterapp.migrations.0012_tokens_audit")
            from django.apps import apps

            with connection.schema_editor() as editor:
                migration.hash_plain_tokens(apps, editor)
            cursor.execute("SELECT COUNT(*) FROM authtoken_token")
            assert cursor.fetchone()[0] == 0
        finally:
            cursor.execute("DROP TABLE authtoken_token")
    token = ApiToken.objects.get(user=user)
    assert token.key_hash == hashlib.sha256(plain.encode()).hexdigest() and token.prefix == plain[:6]
    assert timedelta(days=6, hours=23) < token.expires_at - timezone.now() <= timedelta(days=7)
    assert token_client(plain).get("/api/experiments/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now())
    assert token_client(plain).get("/api/experiments/").status_code == 401


def test_token_create_command_prints_a_working_key(people, capsys):
    from django.core.management import call_command

    call_command("token_create", people["owner"].username, "--days", "2")
    key = capsys.readouterr().out.strip()
    assert token_client(key).get("/api/experiments/").status_code == 200
    assert ApiToken.objects.get(user=people["owner"]).expires_at - timezone.now() <= timedelta(days=2)


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"days": 7}, {"days"}),
        ({"name": "ci", "ttl": 7, "expires": "2030-01-01"}, {"ttl", "expires"}),
        ({"ttl_days": "x", "days": 7}, {"ttl_days", "days"}),
    ],
)
def test_a_field_a_token_does_not_have_is_400_naming_it(client_of, body, errors):
    """``{"days": 7}`` once quietly made a token of the default 30 days."""
    response = client_of("owner").post("/api/tokens/", body, format="json")
    assert response.status_code == 400
    assert set(response.json()) == errors
    for name in errors - {"ttl_days"}:
        assert response.json()[name] == ["Not a field of a new token (those are: name, ttl_days)."]
    assert ApiToken.objects.count() == 0
