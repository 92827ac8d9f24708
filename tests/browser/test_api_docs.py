"""/api/docs/ (Swagger UI) and /api/redoc/ render from the server alone: every request to any
other host is blocked, and none is even attempted but ReDoc's footer logo (left out offline)."""

from __future__ import annotations

import pytest

from .conftest import record_problems

REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


@pytest.mark.parametrize(
    ("path", "rendered", "attempted"),
    [("/api/docs/", ".swagger-ui .info .title", []), ("/api/redoc/", ".redoc-wrap h1", [REDOC_LOGO])],
)
def test_api_docs_render_offline(browser, live_server, path, rendered, attempted):
    context = browser.new_context()
    elsewhere: list[str] = []

    def only_the_server(route):
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_server)
    page = context.new_page()
    problems: list[str] = []
    record_problems(page, problems, expected=lambda url: url in attempted)
    page.goto(f"{live_server.url}{path}")
    title = page.locator(rendered).first
    title.wait_for(timeout=15_000)
    assert "ABCDE rater API" in title.inner_text()
    assert page.locator("text=/api/experiments/").count() > 0
    assert sorted(set(elsewhere)) == attempted
    assert problems == []
    context.close()


def test_pages_have_the_app_s_favicon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"].endswith("raterapp/favicon.svg")
    assert b'rel="icon" href="/static/raterapp/favicon.svg"' in client.get("/login/").content
