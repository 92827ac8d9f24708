import pytest

from tests.raterapp.factories import UserFactory


@pytest.fixture
def media(settings, tmp_path):
    """A media storage of the test's own, so that any file left behind is the test's."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def engineer(db):
    return UserFactory(roles=["engineer"])
