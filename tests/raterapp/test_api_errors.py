"""Under /api/ the answers no view gave are JSON, as every other answer of the API: a server error
(500), a body over the upload limit (400) and an unknown endpoint (404) once answered HTML pages."""

import pytest
from django.test import Client

from raterapp.selectors import health
from tests.raterapp.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_server_error_under_the_api_is_json(monkeypatch):
    def broken():
        raise RuntimeError("the health check broke")

    monkeypatch.setattr(health, "_database", broken)
    response = Client(raise_request_exception=False).get("/api/health/")
    assert response.status_code == 500 and response["Content-Type"] == "application/json"
    assert response.json()["detail"].startswith("Server error:")


def test_a_body_over_the_limit_under_the_api_is_json(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    client = Client()
    client.force_login(UserFactory(roles=["engineer"]))
    response = client.post("/api/tokens/", '{"name": "' + "x" * 5000 + '"}', content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"] == "application/json", response.content[:300]
    assert "DATA_UPLOAD_MAX_MEMORY_SIZE" in response.json()["detail"]


def test_an_unknown_endpoint_is_json_and_an_unknown_page_is_a_page():
    response = Client().get("/api/no-such-thing/")
    assert response.status_code == 404 and response.json() == {"detail": "No API endpoint at /api/no-such-thing/."}
    page = Client().get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


def test_a_database_out_of_reach_is_503_with_retry_after_in_json_and_on_pages(monkeypatch):
    """A terminated connection once answered 500 (the chaos of issue 33): it is the database's
    moment, not the server's fault, and the client may send the request again."""
    from django.db import OperationalError

    from raterapp.views import rating

    def terminated(**kwargs):
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(health, "_database", terminated)
    client = Client(raise_request_exception=False)
    client.force_login(UserFactory(roles=["admin"]))
    response = client.get("/api/health/detail/")
    assert response.status_code == 503 and response["Content-Type"] == "application/json", response.content[:300]
    assert response["Retry-After"] == "5"
    assert response.json()["detail"].startswith("The database is out of reach for a moment: nothing was stored")

    monkeypatch.setattr(rating, "rater_standing_get", terminated)
    client.force_login(UserFactory(roles=["rater"]))
    page = client.get("/rate/")
    assert page.status_code == 503 and page["Retry-After"] == "5"
    assert "Reload the page in a few seconds" in page.content.decode()
