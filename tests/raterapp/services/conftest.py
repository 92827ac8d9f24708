from datetime import timedelta

import pytest
from django.utils import timezone

from tests.raterapp.factories import UserFactory


@pytest.fixture
def media(settings, tmp_path):
    """A media storage of the test's own, so that any file left behind is the test's."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def engineer(db):
    return UserFactory(roles=["engineer"])


@pytest.fixture
def clock(monkeypatch):
    """timezone.now() under the test's control: ``clock.advance(seconds)``."""

    class Clock:
        now = timezone.now()

        def advance(self, seconds):
            self.now += timedelta(seconds=seconds)

    c = Clock()
    monkeypatch.setattr(timezone, "now", lambda: c.now)
    return c
