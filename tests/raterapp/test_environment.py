"""CI must test against the real services: a silent fallback to SQLite is a failure."""

import os

import pytest
from django.conf import settings
from django.db import connection


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="only CI promises PostgreSQL and Redis")
@pytest.mark.django_db
def test_ci_runs_on_postgresql_and_redis():
    assert connection.vendor == "postgresql"
    assert settings.REDIS_URL.startswith("redis://")
    assert settings.CELERY_BROKER_URL == settings.REDIS_URL
