"""Fixtures of the production-shape tests: Chromium from the browser tests."""

from tests.browser.conftest import browser  # noqa: F401 - a fixture, used by test_production.py
