import pytest
from django.conf import settings


@pytest.mark.django_db
def test_health_reports_the_database_and_is_public(client):
    response = client.get("/api/health/")
    body = response.json()
    assert body["database"]["status"] == "ok"
    assert body["redis"]["status"] == ("ok" if settings.REDIS_URL else "not configured")
    assert "worker" in body
    assert response.status_code == (200 if body["ok"] else 503)


@pytest.mark.django_db
def test_health_is_503_when_no_worker_answers(client, monkeypatch):
    from raterapp.selectors import health

    monkeypatch.setattr(health, "_workers", lambda timeout: {"status": "error", "error": "no worker answered"})
    response = client.get("/api/health/")
    assert response.status_code == 503
    assert response.json()["worker"]["error"] == "no worker answered"


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
