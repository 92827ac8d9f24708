"""Real headless Chromium (Debian's package) against Django's live server, with a real Celery worker.

Playwright's own browser download does not work here, so the tests drive /usr/bin/chromium;
when it is missing they fail (never skip) and say how to install it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.db import connections

from tests.e2e.conftest import celery_worker_process  # noqa: F401 - a fixture, used by the tests

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


@pytest.fixture(autouse=True)
def plain_static_storage(settings):
    """Pages use {% static %}; the manifest storage of production needs collectstatic first."""
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}


@pytest.fixture
def browser(monkeypatch):
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}: the browser tests need it. "
            "Install it with `apt-get update && apt-get install -y chromium` (or set CHROMIUM_PATH)."
        )
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop marked as running in this thread, so Django
    # would refuse the test's own ORM calls; nothing here runs concurrently with them.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
            # Queries made while Playwright runs use a connection of their own (asgiref's Local
            # follows the context); close it, or PostgreSQL cannot drop the test database.
            connections.close_all()


@pytest.fixture
def screenshots_dir():
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
