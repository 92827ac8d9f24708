from datetime import timedelta

import numpy as np
import pytest
from django.core.cache import cache
from django.utils import timezone

from raterapp.models import Experiment
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


@pytest.fixture
def truth():
    """A fixed verdict per pair of items (by position): the same whichever experiment asks."""
    return np.random.default_rng(0).random(300) < 0.5


@pytest.fixture
def no_pending_keys(db):
    """The derived, rater-aware and estimates refreshes' pending keys outlive test transactions (the
    cache is Redis): forget them after the test. Not autouse: a module asks for it with
    ``pytest.mark.usefixtures``; a module with an autouse fixture of this name keeps its own."""
    yield
    for experiment_id in Experiment.objects.values_list("pk", flat=True):
        for key in ("derived", "rater-aware", "estimates"):
            cache.delete(f"{key}-pending:{experiment_id}")
