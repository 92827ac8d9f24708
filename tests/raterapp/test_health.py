import pytest
from django.conf import settings


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
    assert client.get("/api/health/detail/").status_code == 403
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


def test_every_response_says_how_long_the_server_took(client, db):
    response = client.get("/api/health/")
    name, duration = response["Server-Timing"].split(";dur=")
    assert name == "app" and 0 < float(duration) < 60_000
