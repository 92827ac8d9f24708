import pytest
from rest_framework.test import APIClient

from tests.raterapp.factories import UserFactory
from tests.raterapp.prepared import experiment_prepared

ROLES = ("anonymous", "rater", "owner", "other", "admin")


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    """A media storage of the test's own."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def people(db):
    """A user for each column of the role tables (anonymous is None)."""
    return {
        "anonymous": None,
        "rater": UserFactory(roles=["rater"]),
        "owner": UserFactory(roles=["engineer"]),
        "other": UserFactory(roles=["engineer"]),
        "admin": UserFactory(roles=["admin"]),
    }


@pytest.fixture
def client_of(people):
    """``client_of("owner")``: an API client logged in as that person."""

    def make(role):
        client = APIClient()
        if people[role] is not None:
            client.force_authenticate(people[role])
        return client

    return make


@pytest.fixture
def experiment(people):
    return experiment_prepared(owner=people["owner"])
