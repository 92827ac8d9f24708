"""The API tokens page in Chromium: make a token, see its key once, use it, revoke it; a
screenshot for a person to look at."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from tests.raterapp.factories import UserFactory

from .conftest import record_problems, settle, sign_in

pytestmark = pytest.mark.django_db(transaction=True)


def api_status(url: str, key: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Token {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_an_engineer_makes_uses_and_revokes_a_token(browser, live_server, screenshots_dir):
    user = UserFactory(username="erin", roles=["engineer"])
    user.set_password("pw-erin")
    user.save()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    record_problems(page, problems)
    sign_in(page, live_server, "erin", "pw-erin", "/experiments/")
    page.get_by_role("link", name="API tokens").click()
    page.get_by_label("What it is for").fill("nightly export")
    page.get_by_label("Days it works").fill("7")
    page.get_by_role("button", name="Make token").click()
    key = page.locator("#token-new-key").input_value()
    assert key.startswith("rt_")
    assert page.get_by_role("row").filter(has_text="nightly export").filter(has_text="active").count() == 1
    settle(page)
    page.screenshot(path=screenshots_dir / "tokens_page.png", full_page=True)
    assert api_status(f"{live_server.url}/api/experiments/", key) == 200

    page.goto(f"{live_server.url}/account/tokens/")  # the key is gone once the page is left
    assert page.locator("#token-new-key").count() == 0 and key not in page.content()
    page.get_by_role("row").filter(has_text="nightly export").get_by_role("button", name="Revoke").click()
    assert page.get_by_role("row").filter(has_text="nightly export").filter(has_text="revoked").count() == 1
    assert api_status(f"{live_server.url}/api/experiments/", key) == 401
    context.close()
    assert problems == []
