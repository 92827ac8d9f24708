"""Issue 16's acceptance, "the login rate limit holds": wrong passwords sent at once from many
clients lock the username out as surely as one after another, on the app's and the Django
admin's sign-in alike, and a locked-out user's API token is not a way around it either
(tokens carry no password; an expired one is refused: tests/raterapp/api/test_tokens.py)."""

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test import Client

from raterapp.services.accounts.login_limits import login_locked_seconds
from tests.raterapp.factories import UserFactory

PASSWORD = "the right one 123"


@pytest.fixture
def limits(settings):
    settings.LOGIN_FAILURE_LIMIT, settings.LOGIN_LOCKOUT_SECONDS = 10, 900
    return settings


def make_user(**extra):
    user = UserFactory(username=f"race-{uuid.uuid4().hex[:8]}", **extra)
    user.set_password(PASSWORD)
    user.save()
    return user


def wrong_password(username: str) -> int:
    try:
        response = Client().post("/login/", {"username": username, "password": "wrong"})
        assert not response.wsgi_request.user.is_authenticated
        return response.status_code
    finally:
        connection.close()  # this thread's own connection


@pytest.mark.django_db(transaction=True)
def test_thirty_wrong_passwords_at_once_lock_the_username_out(limits):
    user = make_user()
    with ThreadPoolExecutor(max_workers=10) as pool:
        statuses = list(pool.map(wrong_password, [user.username] * 30))
    assert statuses == [200] * 30
    assert 0 < login_locked_seconds(username=user.username) <= 901
    response = Client().post("/login/", {"username": user.username, "password": PASSWORD})
    assert response.status_code == 200 and "_auth_user_id" not in response.wsgi_request.session
    assert "Too many failed sign-ins for this username: try again in 15 minutes." in response.content.decode()
    # The same username typed differently is the same username.
    response = Client().post("/login/", {"username": f"  {user.username.upper()} ", "password": PASSWORD})
    assert "_auth_user_id" not in response.wsgi_request.session


@pytest.mark.django_db(transaction=True)
def test_the_django_admins_sign_in_is_locked_out_too(limits):
    user = make_user(roles=["admin"])
    user.is_staff = True
    user.save()
    for _ in range(10):
        Client().post("/admin/login/", {"username": user.username, "password": "wrong"})
    response = Client().post("/admin/login/?next=/admin/", {"username": user.username, "password": PASSWORD})
    assert response.status_code == 200
    assert "Too many failed sign-ins for this username" in response.content.decode()
    assert "_auth_user_id" not in response.wsgi_request.session
