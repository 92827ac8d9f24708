"""The API tokens page: every signed-in user makes, lists and revokes their own tokens; the key
appears once, in the answer that made it, and the token then works with the API."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from raterapp.models import ApiToken
from raterapp.services.accounts.api_tokens import api_token_create

pytestmark = pytest.mark.django_db
URL = "/account/tokens/"


@pytest.mark.parametrize(
    ("who", "status"),
    [("anonymous", 302), ("nobody", 200), ("rater", 200), ("engineer", 200), ("admin", 200), ("superuser", 200)],
)
def test_role_table(sign_in, who, status):
    response = sign_in(who).get(URL)
    assert response.status_code == status
    if status == 302:
        assert response["Location"].startswith("/login/")


def test_a_token_made_on_the_page_shows_its_key_once_and_works(sign_in, users, settings):
    settings.API_TOKEN_TTL_DAYS = 30
    client = sign_in("engineer")
    assert 'value="30"' in client.get(URL).content.decode()
    response = client.post(URL, {"name": "nightly <export>", "ttl_days": "7"})
    page = response.content.decode()
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    key = re.search(r'id="token-new-key"[^>]*value="(rt_[^"]+)"', page)[1]
    assert "nightly &lt;export&gt;" in page and "<export>" not in page
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/experiments/").status_code == 200
    again = client.get(URL).content.decode()
    assert key not in again and key[:9] in again  # the prefix identifies it; the key is gone
    token = ApiToken.objects.get(user=users["engineer"])
    assert (token.expires_at - token.created_at).days == 7


@pytest.mark.parametrize("ttl_days", ["0", "367", "", "x"])
def test_a_bad_lifetime_is_refused_beside_the_field(sign_in, ttl_days):
    response = sign_in("rater").post(URL, {"name": "x", "ttl_days": ttl_days})
    assert response.status_code == 400
    assert 'class="field field--invalid"' in response.content.decode()
    assert ApiToken.objects.count() == 0


def test_revoking_on_the_page_stops_the_token(sign_in, users):
    token, key = api_token_create(actor=users["rater"])
    client = sign_in("rater")
    response = client.post(f"/account/tokens/{token.pk}/revoke/")
    assert response.status_code == 302 and response["Location"] == URL
    token.refresh_from_db()
    assert token.revoked_by == users["rater"]
    assert ">revoked<" in client.get(URL).content.decode()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/raters/me/").status_code == 401


def test_another_users_token_cannot_be_revoked_from_the_page(sign_in, users):
    token, _ = api_token_create(actor=users["engineer"])
    for who in ("rater", "admin"):  # admins revoke others' tokens through the API, not this page
        assert sign_in(who).post(f"/account/tokens/{token.pk}/revoke/").status_code == 404
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
    assert token.prefix not in sign_in("rater").get(URL).content.decode()


def test_the_header_links_to_the_page(sign_in):
    assert f'href="{URL}"' in sign_in("rater").get("/rate/").content.decode()


def test_a_get_of_the_revoke_address_lands_on_the_list_and_revokes_nothing(sign_in, users):
    token, _ = api_token_create(actor=users["rater"])
    response = sign_in("rater").get(f"/account/tokens/{token.pk}/revoke/")
    assert (response.status_code, response["Location"]) == (302, URL)
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None
