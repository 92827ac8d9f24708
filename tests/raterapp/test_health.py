import pytest
from django.conf import settings
from django.test import Client

from raterapp.services.accounts.api_tokens import api_token_create
from tests.raterapp.factories import UserFactory


@pytest.mark.django_db
def test_public_health_is_cheap_and_names_no_host(client, monkeypatch):
    from raterapp.selectors import health

    def no_worker_round_trip(timeout):
        raise AssertionError("the public health check pinged the workers")

    monkeypatch.setattr(health, "_workers", no_worker_round_trip)
    response = client.get("/api/health/")
    redis = "ok" if settings.REDIS_URL else "not configured"
    assert response.status_code == 200
    assert response.json() == {"ok": True, "database": {"status": "ok"}, "redis": {"status": redis}}


@pytest.mark.django_db
def test_detailed_health_is_for_admins_and_503_when_no_worker_answers(client, monkeypatch):
    from raterapp.selectors import health
    from tests.raterapp.factories import UserFactory

    monkeypatch.setattr(health, "_workers", lambda timeout: {"status": "error", "error": "no worker answered"})
    for role in ("rater", "engineer"):
        client.force_login(UserFactory(roles=[role]))
        assert client.get("/api/health/detail/").status_code == 403
    client.logout()
    assert client.get("/api/health/detail/").status_code == 401
    client.force_login(UserFactory(roles=["admin"]))
    response = client.get("/api/health/detail/")
    assert response.status_code == 503
    assert response.json()["worker"]["error"] == "no worker answered"
    assert response.json()["database"]["status"] == "ok"


@pytest.mark.django_db
def test_openapi_schema_and_docs_are_served(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/health/" in schema.content
    assert client.get("/api/docs/").status_code == 200


def test_a_signed_in_caller_is_told_how_long_the_server_took_and_no_one_else(client, db):
    assert "Server-Timing" not in client.get("/api/health/")  # anonymous
    user = UserFactory(roles=["engineer"])
    client.force_login(user)
    name, duration = client.get("/api/experiments/")["Server-Timing"].split(";dur=")
    assert name == "app" and 0 < float(duration) < 60_000
    token = api_token_create(actor=user)[1]  # signed in by token: DRF sets the user in the view
    response = Client().get("/api/experiments/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200 and response["Server-Timing"].startswith("app;dur=")
