import pytest


@pytest.fixture
def other_engineer(db):
    from tests.raterapp.factories import UserFactory

    return UserFactory(username="other", roles=["engineer"])


@pytest.fixture
def superuser(db):
    from django.contrib.auth.models import User

    return User.objects.create_superuser("root", password="pw-root")


@pytest.fixture
def sign_in(client, users, request):
    """``sign_in(who)``: the test client signed in as a user of ``users``, ``other_engineer``
    or ``superuser`` (``anonymous``: not signed in)."""

    def make(who):
        if who in ("other_engineer", "superuser"):
            client.force_login(request.getfixturevalue(who))
        elif who != "anonymous":
            client.force_login(users[who])
        return client

    return make
