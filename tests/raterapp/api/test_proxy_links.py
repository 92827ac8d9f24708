"""Behind the TLS proxy: links the app builds from the request (a new rater's one-time link,
the API's page links) take the proxy's scheme and, when trusted, its host; HSTS and the CSP are
sent with the answers."""

import pytest

from tests.raterapp.prepared import experiment_prepared

PROXY = ("HTTP_X_FORWARDED_PROTO", "https")


@pytest.fixture
def behind_the_proxy(settings):
    settings.SECURE_PROXY_SSL_HEADER = PROXY
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.ALLOWED_HOSTS = ["testserver", "rater.example.org"]
    return settings


def new_rater_link(client, **headers):
    headers = {"Host": "testserver", **headers}  # as the proxy passes it on
    response = client.post("/api/raters/", {"username": "rita", "email": "rita@example.org"}, format="json", headers=headers)
    assert response.status_code == 201, response.content
    return response.json()["set_password_url"]


def test_a_new_raters_link_is_https_when_the_proxy_says_so(behind_the_proxy, client_of):
    link = new_rater_link(client_of("admin"), **{"X-Forwarded-Proto": "https"})
    assert link.startswith("https://testserver/accounts/set-password/")


def test_without_the_proxys_header_the_link_is_http(behind_the_proxy, client_of):
    assert new_rater_link(client_of("admin")).startswith("http://testserver/accounts/set-password/")


def test_the_proxys_host_is_used_only_when_trusted(behind_the_proxy, client_of):
    headers = {"Host": "testserver", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "rater.example.org"}
    assert new_rater_link(client_of("admin"), **headers).startswith("https://testserver/")
    behind_the_proxy.USE_X_FORWARDED_HOST = True
    client = client_of("admin")
    response = client.post("/api/raters/", {"username": "ruth", "email": "ruth@example.org"}, format="json", headers=headers)
    assert response.json()["set_password_url"].startswith("https://rater.example.org/accounts/set-password/")


def test_the_apis_page_links_are_https(behind_the_proxy, client_of, people):
    for n in range(3):
        experiment_prepared(owner=people["owner"], name=f"e{n}", n_draws=20)
    headers = {"Host": "testserver", "X-Forwarded-Proto": "https"}
    body = client_of("owner").get("/api/experiments/?limit=1", headers=headers).json()
    assert body["next"].startswith("https://testserver/api/experiments/?limit=1&offset=1")


def test_https_answers_carry_hsts_and_every_answer_the_csp(behind_the_proxy, client):
    secure = client.get("/login/", headers={"X-Forwarded-Proto": "https"})
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    plain = client.get("/login/")
    assert "Strict-Transport-Security" not in plain  # never over plain http: browsers would ignore it
    for response in (secure, plain, client.get("/api/experiments/")):
        directives = dict(d.strip().split(" ", 1) for d in response["Content-Security-Policy"].split(";"))
        assert directives["default-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
        assert directives["script-src"].startswith("'self'") and "unsafe-inline" not in directives["script-src"]
